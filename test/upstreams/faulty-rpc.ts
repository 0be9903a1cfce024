/**
 * A hosted provider's faults, on loopback: a real HTTP JSON-RPC proxy in front of anvil that behaves, where a test
 * asks it to, as providers document and as their users quote them in public issues:
 * - a load-balanced endpoint one of whose backends lags: half the requests (at random) reach a backend that does
 *   not have the newest blocks yet, and answers their logs `[]` or `null`, their headers `null`, and a block asked
 *   by hash "unknown block";
 * - a node that answers only the first N logs of a range, without an error;
 * - Alchemy's 429 inside a 200 batch answer ("Your app has exceeded its compute units per second capacity"), for
 *   some items;
 * - answers cut off: a body cut in half (a complete HTTP answer holding broken JSON), or the connection dropped
 *   half-way through the body;
 * - an HTML 504 from the gateway for log ranges over N blocks;
 * - an endpoint that refuses batches: HTTP 413, -32600 "batch size exceeded";
 * - bursts of HTTP 429 without Retry-After;
 * - the range caps of Alchemy, Infura, QuickNode and geth-based nodes, in their words (provider-errors.ts);
 * - a node without some methods (`eth_getBlockReceipts`: -32601, as geth words it);
 * - a backend part-way through a fresh block: only its first logs, by range and by block hash alike;
 * - a node whose `eth_getBlockReceipts` takes a block number only (-32602 to a block hash);
 * - the providers' log caps: Alchemy's "any range while its answer holds at most 10K logs, else up to 2K blocks"
 *   (refused with a range that works for this request), Infura's "more than 10000 results" (with that range in
 *   `data`);
 * - a node whose logs carry no `blockTimestamp` (as before geth 1.16).
 * It counts the calls it is sent by method (each item of a batch), the log ranges asked and the headers asked, so
 * that a test can hold the index to the fewest calls. Faults are drawn from a seeded generator, so that a property
 * test's schedule replays exactly.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { ALCHEMY_THROTTLE_MESSAGE, alchemyLogCapError, seededRandom } from "./provider-words.js";

interface RpcMessage {
  id: unknown;
  method: string;
  params: unknown[];
}

export type CapProvider = "alchemy" | "infura" | "quicknode" | "geth";

export interface Faults {
  /**
   * A backend that lags: blocks within `blocks` of the head (and new ones, for `ms` after they appear) are not
   * there yet for it. It serves `share` of the requests (default half; 1: every one but `eth_blockNumber`).
   */
  lag?: { blocks: number; ms: number; answer: "[]" | "null"; share?: number };
  /** Answer only the first N logs of every `eth_getLogs`. */
  truncateAt?: number;
  /** Chance that a batch item is answered with Alchemy's 429 error object instead. */
  itemThrottle?: number;
  /** Chance that an answer's body is cut in half (`cut`) or its connection dropped half-way (`reset`). */
  brokenBody?: { chance: number; how: "cut" | "reset" };
  /** Log ranges over this many blocks answer an HTML 504. */
  gateway504Over?: number;
  /** Every batch (JSON array) is refused with HTTP 413. */
  refuseBatches?: boolean;
  /** Every request in the first `ms` after the first log request (and `again` ms later, if set) answers HTTP 429. */
  throttleBurst?: { ms: number; every?: number };
  /** Log ranges over `blocks` blocks are refused as this provider words it. */
  rangeCap?: { provider: CapProvider; blocks: number };
  /**
   * Log answers over `logs` logs are refused as this provider words it, with the range that works from the same
   * start; at Alchemy, only ranges over `blocks` blocks (default 2,000: those up to it are served whatever they hold).
   */
  logCap?: { provider: "alchemy" | "infura"; logs: number; blocks?: number };
  /** Logs lose their `blockTimestamp`, as nodes before geth 1.16 answer them. */
  stripTimestamps?: boolean;
  /** Methods the node does not offer: answered -32601 as geth words it. */
  refuseMethods?: string[];
  /** Seed of the fault draws. */
  seed?: number;
  // --- Partial blocks and receipts by number (--verify-head, --verify-rpc): see the end of this file. ---
  /**
   * A backend part-way through block `block`: only its first `keep` logs are answered, by range and by block hash,
   * for `ms` after the client's first call (for ever when unset).
   */
  partialBlock?: PartialBlock;
  /** `eth_getBlockReceipts` takes a block number only: a block hash is refused with -32602, as geth words it. */
  receiptsByNumberOnly?: boolean;
  // --- end of partial blocks and receipts by number ---
}

export interface FaultyRpc {
  url: string;
  /** How often each fault struck. */
  struck: Record<string, number>;
  /** Calls sent, by method (each item of a batch counts). */
  calls: Record<string, number>;
  /** Each `eth_getLogs` by range asked, in order, and whether it was refused for its size. */
  logRanges: { from: number; to: number; refused: boolean }[];
  /** The block of each `eth_getBlockByNumber` asked, in order (`latest` as asked). */
  headerReads: string[];
  close(): Promise<void>;
}

const HTML_504 =
  "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

export async function startFaultyRpc(target: string, faults: Faults): Promise<FaultyRpc> {
  const draw = seededRandom(faults.seed ?? 1);
  const struck: Record<string, number> = {};
  const calls: Record<string, number> = {};
  const logRanges: FaultyRpc["logRanges"] = [];
  const headerReads: string[] = [];
  const strike = (fault: string) => {
    struck[fault] = (struck[fault] ?? 0) + 1;
  };
  // The lag's clock starts at the client's first call, not at the proxy's start: a client process that is slow to
  // start (a loaded machine) must still meet the fault.
  let started: number | undefined;
  let burstFrom: number | undefined;

  const forward = async (body: unknown): Promise<unknown> => {
    const res = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return res.json();
  };
  const rpc = async <T>(method: string, params: unknown[]): Promise<T> =>
    ((await forward({ jsonrpc: "2.0", id: 1, method, params })) as { result: T }).result;

  // The lagging backend: which blocks it has. Blocks near the head at start, and every later one, appear to it
  // `lag.ms` after the proxy first saw them.
  const headAtStart = Number(await rpc<string>("eth_blockNumber", []));
  const firstSeen = new Map<number, number>();
  let newestSeen = headAtStart;
  const seenUpTo = (head: number) => {
    for (let n = newestSeen + 1; n <= head; n++) firstSeen.set(n, Date.now());
    newestSeen = Math.max(newestSeen, head);
  };
  const lagging = (block: number): boolean => {
    const lag = faults.lag;
    if (!lag) return false;
    const appeared = firstSeen.get(block) ?? (block > headAtStart - lag.blocks ? started : undefined);
    return appeared !== undefined && Date.now() < appeared + lag.ms;
  };
  const hashes = new Map<string, number>();

  /** One call as the faulty provider answers it; undefined to forward it as it is. */
  const answer = async (call: RpcMessage, behind: boolean): Promise<unknown> => {
    started ??= Date.now();
    calls[call.method] = (calls[call.method] ?? 0) + 1;
    if (call.method === "eth_getBlockByNumber") headerReads.push(String(call.params[0]));
    const reply = (result: unknown) => ({ jsonrpc: "2.0", id: call.id, result });
    const error = (code: number, message: string, data?: unknown) => ({
      jsonrpc: "2.0",
      id: call.id,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    });
    if (call.method === "eth_blockNumber") {
      const head = await rpc<string>("eth_blockNumber", []);
      seenUpTo(Number(head));
      return reply(head);
    }
    if (call.method === "eth_getBlockByNumber") {
      const header = await rpc<{ number: string; hash: string } | null>(call.method, call.params);
      if (header) hashes.set(header.hash.toLowerCase(), Number(header.number));
      if (header && behind && lagging(Number(header.number))) {
        strike("lag: null header");
        return reply(null);
      }
      return reply(header);
    }
    if (faults.refuseMethods?.includes(call.method)) {
      strike(`no ${call.method}`);
      return error(-32601, `the method ${call.method} does not exist/is not available`);
    }
    if (call.method === "eth_getBlockReceipts") {
      if (faults.receiptsByNumberOnly && refusesHash(call.params)) {
        strike("receipts by hash refused");
        return error(-32602, RECEIPTS_BY_NUMBER_ONLY);
      }
      const receipts = await rpc<{ blockNumber: string }[] | null>(call.method, call.params);
      if (receipts?.[0] && behind && lagging(Number(receipts[0].blockNumber))) {
        strike("lag: null receipts");
        return reply(null);
      }
      return reply(receipts);
    }
    if (call.method !== "eth_getLogs") return undefined;
    const filter = call.params[0] as { fromBlock?: string; toBlock?: string; blockHash?: string };
    let from: number;
    let to: number;
    if (filter.blockHash) {
      const known = hashes.get(filter.blockHash.toLowerCase());
      if (known === undefined) {
        const header = await rpc<{ number: string } | null>("eth_getBlockByHash", [filter.blockHash, false]);
        if (header) hashes.set(filter.blockHash.toLowerCase(), Number(header.number));
      }
      from = to = hashes.get(filter.blockHash.toLowerCase()) ?? -1;
      if (behind && lagging(from)) {
        strike("lag: unknown block");
        return error(-32000, "unknown block");
      }
    } else {
      from = Number(filter.fromBlock);
      to = Number(filter.toBlock);
      const cap = faults.rangeCap;
      if (cap && to - from + 1 > cap.blocks) {
        strike(`range cap: ${cap.provider}`);
        logRanges.push({ from, to, refused: true });
        return capRefusal(call, cap, from, to - from + 1);
      }
    }
    const logs = await rpc<{ blockNumber: string; blockTimestamp?: string }[]>("eth_getLogs", call.params);
    const logCap = faults.logCap;
    if (!filter.blockHash && logCap && logs.length > logCap.logs) {
      // Alchemy serves up to 2K blocks whatever they hold; Infura no answer over its cap.
      const served = logCap.provider === "alchemy" ? (logCap.blocks ?? 2_000) : 0;
      if (to - from + 1 > served) {
        // The range that works from the same start: up to the block before the first log over the cap.
        const end = Math.max(Number(logs[logCap.logs]!.blockNumber) - 1, from, from + served - 1);
        strike(`log cap: ${logCap.provider}`);
        logRanges.push({ from, to, refused: true });
        return logCapRefusal(call, logCap.provider, from, end);
      }
    }
    if (!filter.blockHash) logRanges.push({ from, to, refused: false });
    if (faults.stripTimestamps) {
      strike("no blockTimestamp");
      for (const log of logs) delete log.blockTimestamp;
    }
    let result: unknown[] | null = logs;
    if (behind && faults.lag) {
      const visible = logs.filter((log) => !lagging(Number((log as { blockNumber: string }).blockNumber)));
      const hidden = logs.length - visible.length;
      let hides = hidden > 0;
      for (let n = from; n <= to && !hides; n++) hides = lagging(n);
      if (hides) {
        strike(`lag: ${faults.lag.answer}`);
        result = faults.lag.answer === "null" ? null : visible;
      }
    }
    if (result && faults.truncateAt !== undefined && result.length > faults.truncateAt) {
      strike("truncated");
      result = result.slice(0, faults.truncateAt);
    }
    if (result && faults.partialBlock) result = partial(faults.partialBlock, result, started, strike);
    return reply(result);
  };

  const send = (res: ServerResponse, status: number, body: string, type = "application/json") => {
    const broken = faults.brokenBody;
    if (broken && status === 200 && body.length > 40 && draw() < broken.chance) {
      strike(`body ${broken.how}`);
      const half = body.slice(0, Math.floor(body.length / 2));
      if (broken.how === "cut") {
        res.writeHead(200, { "content-type": type, "content-length": Buffer.byteLength(half) });
        res.end(half);
      } else {
        res.writeHead(200, { "content-type": type, "content-length": Buffer.byteLength(body) });
        res.write(half, () => res.socket?.destroy());
      }
      return;
    }
    res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
    res.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as RpcMessage | RpcMessage[];
    const calls = Array.isArray(body) ? body : [body];
    const burst = faults.throttleBurst;
    if (burst && calls.some((c) => c.method === "eth_getLogs")) burstFrom ??= Date.now();
    if (burst && burstFrom !== undefined) {
      const since = Date.now() - burstFrom;
      const phase = burst.every ? since % burst.every : since;
      if (phase < burst.ms) {
        strike("429 burst");
        return send(
          res,
          429,
          JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too Many Requests" } }),
        );
      }
    }
    if (Array.isArray(body) && faults.refuseBatches) {
      strike("batch refused");
      return send(
        res,
        413,
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batch size exceeded" } }),
      );
    }
    const gateway = faults.gateway504Over;
    if (gateway !== undefined) {
      for (const call of calls) {
        const filter =
          call.method === "eth_getLogs" ? (call.params[0] as { fromBlock?: string; toBlock?: string }) : {};
        if (filter.fromBlock && Number(filter.toBlock) - Number(filter.fromBlock) + 1 > gateway) {
          strike("HTML 504");
          return send(res, 504, HTML_504, "text/html");
        }
      }
    }
    // A load balancer sends each request to one backend: the lagging one half the time.
    const behind = faults.lag !== undefined && draw() < (faults.lag.share ?? 0.5);
    const replies: unknown[] = [];
    const passed: RpcMessage[] = [];
    const at: number[] = [];
    for (const call of calls) {
      if (Array.isArray(body) && faults.itemThrottle && draw() < faults.itemThrottle) {
        strike("item 429");
        replies.push({ jsonrpc: "2.0", id: call.id, error: { code: 429, message: ALCHEMY_THROTTLE_MESSAGE } });
        continue;
      }
      const own = await answer(call, behind);
      if (own !== undefined) replies.push(own);
      else {
        at.push(replies.length);
        replies.push(undefined);
        passed.push(call);
      }
    }
    if (passed.length > 0) {
      const forwarded = (await forward(passed)) as { id: unknown }[];
      const byId = new Map(forwarded.map((r) => [r.id, r]));
      passed.forEach((call, i) => {
        replies[at[i]!] = byId.get(call.id);
      });
    }
    // QuickNode's range cap comes with HTTP 413.
    const statused = replies.find((r) => (r as { status?: number }).status !== undefined) as
      | { status: number; body: unknown }
      | undefined;
    const plain = replies.map((r) =>
      (r as { status?: number }).status !== undefined ? (r as { body: unknown }).body : r,
    );
    const status = statused && !Array.isArray(body) ? statused.status : 200;
    send(res, status, JSON.stringify(Array.isArray(body) ? plain : plain[0]));
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) send(res, 500, JSON.stringify({ error: String(err) }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    struck,
    calls,
    logRanges,
    headerReads,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A provider's refusal of an answer over its log cap, in its words, with the range that works (`[from, end]`). */
function logCapRefusal(call: RpcMessage, provider: "alchemy" | "infura", from: number, end: number) {
  const hex = (n: number) => `0x${n.toString(16)}`;
  if (provider === "infura") {
    return {
      jsonrpc: "2.0",
      id: call.id,
      error: {
        code: -32005,
        message: "query returned more than 10000 results",
        data: { from: hex(from), to: hex(end), limit: 10000 },
      },
    };
  }
  return alchemyLogCapError(call.id, from, end);
}

/** A provider's refusal of a log range over its cap, in its words (sources in provider-errors.ts). */
function capRefusal(call: RpcMessage, cap: { provider: CapProvider; blocks: number }, from: number, size: number) {
  const error = (code: number, message: string) => ({ jsonrpc: "2.0", id: call.id, error: { code, message } });
  switch (cap.provider) {
    case "alchemy":
      return alchemyLogCapError(call.id, from, from + cap.blocks - 1);
    case "infura":
      return error(-32602, `range ${size} exceeds limit of ${cap.blocks}`);
    case "quicknode":
      return {
        status: 413,
        body: error(-32614, `eth_getLogs is limited to a ${cap.blocks.toLocaleString("en-US")} range`),
      };
    case "geth":
      return error(-32000, `exceed maximum block range: ${cap.blocks}`);
  }
}

// --- Partial blocks and receipts by number (--verify-head, --verify-rpc) ---

export interface PartialBlock {
  block: number;
  keep: number;
  ms?: number;
}

/** geth's words for a block hash given where a block number is taken. */
const RECEIPTS_BY_NUMBER_ONLY = "invalid argument 0: hex number > 64 bits";

/** Whether `eth_getBlockReceipts` was asked by block hash (32 bytes) rather than by number or tag. */
function refusesHash(params: unknown[]): boolean {
  return typeof params[0] === "string" && /^0x[0-9a-f]{64}$/i.test(params[0]);
}

/** An `eth_getLogs` answer with only the first `keep` logs of the partial block, while it is partial. */
function partial(fault: PartialBlock, logs: unknown[], since: number | undefined, strike: (f: string) => void) {
  if (fault.ms !== undefined && since !== undefined && Date.now() >= since + fault.ms) return logs;
  let kept = 0;
  const out = logs.filter(
    (log) => Number((log as { blockNumber: string }).blockNumber) !== fault.block || kept++ < fault.keep,
  );
  if (out.length < logs.length) strike("partial block");
  return out;
}
// --- end of partial blocks and receipts by number ---
