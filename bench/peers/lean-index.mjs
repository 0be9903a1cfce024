/**
 * The job of `chainmail index --once` over a chain of ERC-721 `Transfer` logs, written by hand as lean as it
 * goes: a plain `fetch` + `JSON.parse` loop of `eth_getLogs` over fixed block ranges, one batch of block headers
 * per range for the timestamps, and one prepared better-sqlite3 insert of the same rows into the same table
 * (same columns, key and indexes), one transaction per range. No reorg checks, no other decoders, no retries.
 * Usage: node lean-index.mjs <rpc url> <sqlite file> <blocks per eth_getLogs>
 * Prints `{"records": n}`.
 */
import Database from "better-sqlite3";

const [rpcUrl, file, blocksArg] = process.argv.slice(2);
const step = Number(blocksArg);
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const ZERO = "0x0000000000000000000000000000000000000000";

const db = new Database(file);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.exec(`
CREATE TABLE activity (
  block_number INTEGER NOT NULL, log_index INTEGER NOT NULL, batch_index INTEGER NOT NULL, kind TEXT NOT NULL,
  contract TEXT NOT NULL, token_id TEXT NOT NULL, from_addr TEXT NOT NULL, to_addr TEXT NOT NULL,
  quantity TEXT NOT NULL, tx_hash TEXT NOT NULL, block_hash TEXT NOT NULL, timestamp INTEGER NOT NULL,
  contract_type TEXT, marketplace TEXT, currency TEXT, price TEXT, price_usd REAL,
  PRIMARY KEY (block_number, log_index, batch_index)
) WITHOUT ROWID;
CREATE INDEX activity_by_contract ON activity (contract, block_number, log_index, batch_index);
CREATE INDEX activity_by_token ON activity (contract, token_id, block_number, log_index, batch_index);`);
const insert = db.prepare(
  `INSERT INTO activity (block_number, log_index, batch_index, kind, contract, token_id, from_addr, to_addr, quantity,
     tx_hash, block_hash, timestamp, contract_type) VALUES (?, ?, 0, ?, ?, ?, ?, ?, '1', ?, ?, ?, 'ERC721')
   ON CONFLICT DO NOTHING`,
);
const write = db.transaction((logs, timestamps) => {
  let n = 0;
  for (const log of logs) {
    if (log.topics.length !== 4) continue; // ERC-20 Transfer
    const from = `0x${log.topics[1].slice(26)}`;
    const to = `0x${log.topics[2].slice(26)}`;
    const block = Number(log.blockNumber);
    n += insert.run(
      block,
      Number(log.logIndex),
      from === ZERO ? "mint" : to === ZERO ? "burn" : "transfer",
      log.address.toLowerCase(),
      BigInt(log.topics[3]).toString(),
      from,
      to,
      log.transactionHash,
      log.blockHash,
      timestamps.get(block),
    ).changes;
  }
  return n;
});

let id = 0;
async function rpc(body) {
  const res = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.json();
}
const call = async (method, params) => (await rpc(JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }))).result;

const head = Number(await call("eth_blockNumber", []));
let records = 0;
for (let from = 0; from <= head; from += step) {
  const to = Math.min(head, from + step - 1);
  const logs = await call("eth_getLogs", [
    { fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, topics: [TRANSFER] },
  ]);
  const blocks = [...new Set(logs.map((log) => log.blockNumber))];
  const timestamps = new Map();
  if (blocks.length > 0) {
    const batch = blocks.map((n) => ({ jsonrpc: "2.0", id: ++id, method: "eth_getBlockByNumber", params: [n, false] }));
    for (const { result } of await rpc(JSON.stringify(batch)))
      timestamps.set(Number(result.number), Number(result.timestamp));
  }
  records += write(logs, timestamps);
}
db.close();
console.log(JSON.stringify({ records }));
