/**
 * The job of `chainmail serve`'s `POST /nodes/nft-transactions-by-token`, written by hand as a user would: Fastify
 * (its own JSON body parser and serialiser) and undici's `request` to NFTPort, the page parsed with `JSON.parse`
 * and answered in the same shape (`data` and the raw `response`). No validation, no access control, no metrics,
 * no logging, no retries, integers beyond 2^53 rounded.
 * Usage: node fastify-proxy.mjs <NFTPort base URL>; says where it listens on stderr, serves until SIGTERM.
 */
import Fastify from "fastify";
import { request } from "undici";

const [base] = process.argv.slice(2);
const app = Fastify();
app.post("/nodes/nft-transactions-by-token", async (req) => {
  const { query, params } = req.body;
  const url =
    `${base}/v0/transactions/nfts/${encodeURIComponent(query.contract_address)}/${encodeURIComponent(query.token_id)}` +
    `?chain=${encodeURIComponent(params.chain ?? "ethereum")}&type=all&page_size=${query.page_size ?? 50}`;
  const res = await request(url, { headers: { authorization: params.api_key, accept: "application/json" } });
  const body = await res.body.text();
  const page = JSON.parse(body);
  return {
    data: { response: page.response, transactions: page.transactions, continuation: page.continuation ?? "" },
    response: { status: res.statusCode, headers: res.headers, body },
  };
});
const url = await app.listen({ port: 0, host: "127.0.0.1" });
process.stderr.write(`fastify-proxy: listening on ${url}\n`);
process.once("SIGTERM", () => app.close().then(() => process.exit(0)));
