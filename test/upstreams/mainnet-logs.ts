/**
 * A JSON-RPC node on loopback that serves real mainnet transactions from test/fixtures/index-mainnet: exactly their
 * logs (filtered like `eth_getLogs` filters), their blocks, and their transactions. Blocks between and around them
 * are fillers whose hashes chain to the real headers (a real block's parent hash is its filler predecessor's
 * hash), so the indexer's reorg checks see one consistent chain. A fixture whose source gave no block gets a
 * filler block of its own, numbered from SYNTHETIC_FIRST; one whose source gave only the block's number and hash
 * gets a filler parent hash and timestamp.
 */

import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export const FIXTURE_DIR = join(import.meta.dirname, "..", "fixtures", "index-mainnet");
/** Blocks of fixtures whose source names none: just below the real ones, so one short walk covers all. */
export const SYNTHETIC_FIRST = 19_600_001;

export interface ExpectedSale {
  log_index: number;
  seller: string;
  buyer: string;
  contract: string;
  token_id: string;
  quantity: string;
  contract_type: string | null;
  currency: string | null;
  price_wei: string | null;
  marketplace: string;
}

export interface MainnetFixture {
  file: string;
  venue: string;
  block: { number: string; hash: string; parentHash?: string; timestamp?: string } | null;
  /** `input` is missing where the source holds only the receipt (its sender and recipient). */
  transaction: { hash: string; from: string; to: string; input?: string; value?: string } | null;
  logs: { address: string; topics: string[]; data: string; transactionHash: string; logIndex: string }[];
  expected: ExpectedSale[];
  /** Exchange logs of the transaction that the index counts as not understood (a bundle), when there are any. */
  unknown_logs?: number;
}

export function loadFixtures(): MainnetFixture[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map(
      (file) => ({ file, ...(JSON.parse(readFileSync(join(FIXTURE_DIR, file), "utf8")) as object) }) as MainnetFixture,
    );
}

interface Header {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const fillerHash = (n: number) => `0x${createHash("sha256").update(`filler ${n}`).digest("hex")}`;

export interface MainnetNode {
  url: string;
  /** The block each fixture's transaction sits in. */
  blockOf(fixture: MainnetFixture): Header;
  head: number;
  /** Requests by method, to show that lookups are batched. */
  calls: Map<string, number>;
  close(): Promise<void>;
}

export async function startMainnetNode(fixtures: MainnetFixture[]): Promise<MainnetNode> {
  const real = new Map<number, MainnetFixture["block"] & object>();
  const placed = new Map<MainnetFixture, number>();
  let synthetic = SYNTHETIC_FIRST;
  for (const f of fixtures) {
    if (f.block) {
      const n = Number(f.block.number);
      real.set(n, { ...f.block, number: hex(n) });
      placed.set(f, n);
    } else {
      placed.set(f, synthetic++);
    }
  }
  const head = Math.max(...placed.values()) + 5;
  const hashOf = (n: number): string => real.get(n)?.hash ?? real.get(n + 1)?.parentHash ?? fillerHash(n);
  const header = (n: number): Header => ({
    number: hex(n),
    hash: hashOf(n),
    parentHash: real.get(n)?.parentHash ?? hashOf(n - 1),
    // Fillers (and the blocks of sources without one) tick 12 s from the first real block's time.
    timestamp: real.get(n)?.timestamp ?? hex(1_712_000_000 + (n - SYNTHETIC_FIRST) * 12),
  });
  // In chain order, as a node answers (several fixtures can share a block).
  const logs = fixtures
    .flatMap((f) => {
      const n = placed.get(f)!;
      return f.logs.map((log) => ({
        ...log,
        blockNumber: hex(n),
        blockHash: hashOf(n),
        transactionIndex: "0x0",
        removed: false,
      }));
    })
    .sort((a, b) => Number(a.blockNumber) - Number(b.blockNumber) || Number(a.logIndex) - Number(b.logIndex));
  const transactions = new Map(
    fixtures.filter((f) => f.transaction).map((f) => [f.transaction!.hash.toLowerCase(), f]),
  );
  const calls = new Map<string, number>();

  const answer = (method: string, params: unknown[]): unknown => {
    calls.set(method, (calls.get(method) ?? 0) + 1);
    switch (method) {
      case "eth_blockNumber":
        return hex(head);
      case "eth_getBlockByNumber": {
        const n = Number(params[0]);
        return n <= head ? header(n) : null;
      }
      case "eth_getLogs": {
        const filter = params[0] as { fromBlock: string; toBlock: string; topics?: string[][]; address?: string[] };
        const [from, to] = [Number(filter.fromBlock), Number(filter.toBlock)];
        const topics = new Set(filter.topics?.[0]?.map((t) => t.toLowerCase()));
        const addresses = filter.address ? new Set(filter.address.map((a) => a.toLowerCase())) : undefined;
        return logs.filter((log) => {
          const n = Number(log.blockNumber);
          return (
            n >= from &&
            n <= to &&
            topics.has(log.topics[0]!.toLowerCase()) &&
            (!addresses || addresses.has(log.address.toLowerCase()))
          );
        });
      }
      case "eth_getTransactionByHash": {
        const f = transactions.get(String(params[0]).toLowerCase());
        if (!f) return null;
        const n = placed.get(f)!;
        return { value: "0x0", ...f.transaction, blockNumber: hex(n), blockHash: hashOf(n) };
      }
      case "eth_call":
        // decimals() of the payment tokens these transactions use (WETH, Blur Pool): 18, as on mainnet.
        return `0x${(18).toString(16).padStart(64, "0")}`;
      default:
        throw new Error(`unsupported ${method}`);
    }
  };

  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      const parsed = JSON.parse(body) as
        | { id: number; method: string; params: unknown[] }
        | { id: number; method: string; params: unknown[] }[];
      const one = (r: { id: number; method: string; params: unknown[] }) => {
        try {
          return { jsonrpc: "2.0", id: r.id, result: answer(r.method, r.params) };
        } catch (err) {
          return { jsonrpc: "2.0", id: r.id, error: { code: -32601, message: (err as Error).message } };
        }
      };
      const reply = Array.isArray(parsed) ? parsed.map(one) : one(parsed);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    blockOf: (f) => header(placed.get(f)!),
    head,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
