/**
 * The HTTP service under load (autocannon): POST /nodes/nft-transactions-by-token through chainmail against the
 * local NFTPort server, next to the same GET sent straight to that server (the limit). Prints req/s, p50 and p99
 * latency of each and the ratio. Everything runs in this one process on loopback, request logging off.
 */
import autocannon from "autocannon";
import { startServer } from "../src/server/index.js";
import { testConfig } from "../test/helpers.js";
import { startNftport, VALID_KEY } from "../test/upstreams/nftport.js";
import { CONTRACT_721, standardDataset } from "../test/upstreams/nftport-data.js";

const CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TOKEN_ID = "1";

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(options: autocannon.Options): Promise<Figures> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

const show = (name: string, f: Figures) =>
  console.log(
    `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(7)} req/s   p50 ${String(f.p50).padStart(4)} ms   p99 ${String(f.p99).padStart(4)} ms   non-2xx ${f.non2xx}, errors ${f.errors}`,
  );

export default async function serverBench(): Promise<void> {
  const upstream = await startNftport(standardDataset());
  const server = await startServer({
    port: 0,
    config: testConfig({ NFTPORT_BASE_URL: upstream.url, NFTPORT_MAX_RETRIES: "0" }),
  });
  try {
    const direct = await load({
      url: `${upstream.url}/v0/transactions/nfts/${CONTRACT_721}/${TOKEN_ID}?chain=ethereum&type=all`,
      headers: { authorization: VALID_KEY },
    });
    const service = await load({
      url: `${server.url}/nodes/nft-transactions-by-token`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: { contract_address: CONTRACT_721, token_id: TOKEN_ID },
        params: { api_key: VALID_KEY },
      }),
    });
    console.log(`${CONNECTIONS} connections, ${SECONDS} s each, one page of token ${TOKEN_ID} per request`);
    show("NFTPort (local) direct GET", direct);
    show("chainmail POST /nodes/…-by-token", service);
    console.log(`ratio service/direct: ${(service.rps / direct.rps).toFixed(2)} of the requests per second`);
  } finally {
    await server.close();
    await upstream.close();
  }
}
