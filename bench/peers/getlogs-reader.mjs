/**
 * The floor of `chainmail index --once`: only reading the logs. undici's `request` + `JSON.parse` of `eth_getLogs`
 * over the chain's blocks, a fixed number of blocks per call (one by default, as chainmail reads 10,000-log blocks),
 * the NFT `Transfer` topic only; nothing decoded, nothing stored, no headers, no checks, no retries.
 * Usage: node getlogs-reader.mjs <rpc url> [blocks per eth_getLogs]
 * Prints `{"logs": n}`.
 */
import { request } from "undici";

const [rpcUrl, blocksArg] = process.argv.slice(2);
const step = Number(blocksArg ?? 1);
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

let id = 0;
async function call(method, params) {
  const res = await request(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
  });
  const answer = JSON.parse(await res.body.text());
  if (res.statusCode !== 200 || answer.error)
    throw new Error(`HTTP ${res.statusCode}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

const head = Number(await call("eth_blockNumber", []));
let logs = 0;
for (let from = 0; from <= head; from += step) {
  const to = Math.min(head, from + step - 1);
  const range = { fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, topics: [TRANSFER] };
  logs += (await call("eth_getLogs", [range])).length;
}
process.stdout.write(`${JSON.stringify({ logs })}\n`);
