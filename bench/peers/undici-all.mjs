/**
 * The job of `chainmail run nft-transactions-by-contract --all` at its barest: undici's `request` + `JSON.parse`
 * on `continuation`, every record printed as one JSON object, page by page (one write per page). No validation, no
 * retries, integers beyond 2^53 rounded: what each further page costs at the least.
 * Usage: node undici-all.mjs <NFTPort base URL> <contract> <api key>
 */
import { request } from "undici";

const [base, contract, key] = process.argv.slice(2);
const headers = { authorization: key, accept: "application/json" };
const write = (text) =>
  new Promise((resolve) => (process.stdout.write(text) ? resolve() : process.stdout.once("drain", resolve)));
let continuation = "";
let first = true;
await write('{\n"data": {"response": "OK", "transactions": [');
do {
  const more = continuation ? `&continuation=${encodeURIComponent(continuation)}` : "";
  const res = await request(`${base}/v0/transactions/nfts/${contract}?chain=ethereum&page_size=50${more}`, { headers });
  const page = JSON.parse(await res.body.text());
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
  if (page.transactions.length > 0) {
    await write((first ? "\n" : ",\n") + page.transactions.map((r) => JSON.stringify(r)).join(",\n"));
    first = false;
  }
  continuation = page.continuation ?? "";
} while (continuation);
await write('\n], "continuation": ""}\n}\n');
