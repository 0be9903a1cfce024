/**
 * What the input hardening of issue 10 costs, side by side with what it replaced, and what slow clients cost the
 * service:
 *
 * - parsing: `parseJson` (`JSON.parse`, then one walk of the result for depth and numbers beyond 2^53) vs bare
 *   `JSON.parse`, on a real 50-record NFTPort page and on a 10,000-message email-send body;
 * - reading a port: `readJsonData` (own properties, depth, cycles, the copy defaults go into) vs the
 *   `structuredClone` it replaced, on the same email-send input;
 * - the service with 1,000 slow sockets open (a third idle, a third trickling headers, a third trickling a body):
 *   its heap and RSS, and the latency of valid requests sent meanwhile, next to the same requests with none open.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { request } from "undici";
import { parseJson } from "../src/core/json.js";
import { readJsonData } from "../src/core/validate.js";
import { startServer } from "../src/server/index.js";
import { testConfig } from "../test/support/helpers.js";
import { startNftport, VALID_KEY } from "../test/upstreams/nftport.js";
import { CONTRACT_721, standardDataset } from "../test/upstreams/nftport-data.js";
import { interleaved, loadAverage, median, ratio } from "./measure.js";

const ROUNDS = 9;

/** Milliseconds per call of `run`, averaged over `calls` calls. */
function perCall(run: () => unknown, calls: number): number {
  const start = performance.now();
  for (let i = 0; i < calls; i++) run();
  return (performance.now() - start) / calls;
}

async function inputChecks(): Promise<void> {
  const page = readFileSync(
    join(import.meta.dirname, "..", "test", "fixtures", "nftport", "s4b-by-token-full-page-a49a0e-11.json"),
    "utf8",
  );
  // Re-serialised: its 10^22 quantities become doubles, so both parsers take the native path and the difference
  // is the depth check alone.
  const pageText = JSON.stringify(JSON.parse(page));
  const input = {
    params: { "user id": "key", password: "secret" },
    request: {
      Messages: Array.from({ length: 10_000 }, (_, i) => ({
        From: { Email: "news@example.com", Name: "News" },
        To: [{ Email: `reader-${i}@example.org`, Name: `Reader ${i}` }],
        Subject: `Issue ${i}`,
        TextPart: "x".repeat(200),
        Variables: { n: i, tags: ["a", "b"], nested: { k: "v" } },
      })),
    },
  };
  const batchText = JSON.stringify(input);
  const load = await loadAverage();
  const rows: [string, string, number, number][] = [];
  const parse = (text: string, calls: number) =>
    interleaved(ROUNDS, {
      parseJson: async () => perCall(() => parseJson(text), calls),
      jsonParse: async () => perCall(() => JSON.parse(text), calls),
    });
  const p = await parse(pageText, 400);
  rows.push([
    `parse a 50-record page (${(pageText.length / 1024).toFixed(0)} KB)`,
    "JSON.parse",
    median(p.parseJson),
    median(p.jsonParse),
  ]);
  const b = await parse(batchText, 3);
  rows.push([
    `parse a 10,000-message body (${(batchText.length / 2 ** 20).toFixed(1)} MiB)`,
    "JSON.parse",
    median(b.parseJson),
    median(b.jsonParse),
  ]);
  const request = input.request;
  const c = await interleaved(ROUNDS, {
    read: async () => perCall(() => readJsonData(request, "request", 2), 3),
    clone: async () => perCall(() => structuredClone(request), 3),
  });
  rows.push(["read the 10,000-message request port", "structuredClone", median(c.read), median(c.clone)]);
  console.log(`input checks, ms per call, medians of ${ROUNDS} interleaved rounds (load ${load}):`);
  for (const [what, against, ours, theirs] of rows) {
    console.log(
      `  ${what.padEnd(44)} ${ours.toFixed(3)} ms   vs ${against} ${theirs.toFixed(3)} ms   ${ratio(ours, theirs)}`,
    );
  }
}

function slowSocket(port: number, kind: number, sockets: Socket[]): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => resolve());
    socket.on("error", () => {});
    sockets.push(socket);
    const trickle = (text: string) => {
      const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(text)), 500);
    };
    if (kind === 1) {
      socket.write("POST /nodes/nft-transactions-by-token HTTP/1.1\r\n");
      trickle("X-Slow: 1\r\n");
    } else if (kind === 2) {
      socket.write("POST /nodes/nft-transactions-by-token HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n");
      trickle(" ");
    }
  });
}

async function slowClients(): Promise<void> {
  const upstream = await startNftport(standardDataset(20));
  // Timeouts longer than the measurement, so every slow socket stays open while valid requests are timed.
  const server = await startServer({
    port: 0,
    config: testConfig({
      NFTPORT_BASE_URL: upstream.url,
      CHAINMAIL_HEADERS_TIMEOUT_MS: "60000",
      CHAINMAIL_BODY_TIMEOUT_MS: "60000",
    }),
  });
  const port = Number(new URL(server.url).port);
  const body = JSON.stringify({
    query: { contract_address: CONTRACT_721, token_id: "1" },
    params: { api_key: VALID_KEY },
  });
  const latencies = async (count: number) => {
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      const res = await request(`${server.url}/nodes/nft-transactions-by-token`, { method: "POST", body });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
      out.push(performance.now() - start);
    }
    return median(out);
  };
  const memory = () => {
    (globalThis as { gc?: () => void }).gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    return { rss: rss / 2 ** 20, heap: heapUsed / 2 ** 20 };
  };
  try {
    await latencies(200); // warm up
    const before = memory();
    const quiet = await latencies(500);
    const sockets: Socket[] = [];
    for (let i = 0; i < 1000; i++) await slowSocket(port, i % 3, sockets);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const busy = await latencies(500);
    const open = memory();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = memory();
    console.log(
      `service with 1,000 slow sockets open (idle / slow headers / slow body), one process (load ${await loadAverage()}):`,
    );
    console.log(
      `  valid request p50: ${quiet.toFixed(2)} ms with none open, ${busy.toFixed(2)} ms with 1,000 open (${ratio(busy, quiet)})`,
    );
    console.log(
      `  heap ${before.heap.toFixed(0)} → ${open.heap.toFixed(0)} → ${after.heap.toFixed(0)} MiB, RSS ${before.rss.toFixed(0)} → ${open.rss.toFixed(0)} → ${after.rss.toFixed(0)} MiB (none / 1,000 open, both ends in one process / closed)`,
    );
  } finally {
    await server.close();
    await upstream.close();
  }
}

export default async function hardeningBench(): Promise<void> {
  await inputChecks();
  await slowClients();
}
