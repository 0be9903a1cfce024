/**
 * A metered endpoint, on loopback: a real HTTP JSON-RPC proxy in front of anvil that bills each call by a
 * provider's cost table (Alchemy's classic compute units from src/chain/providers.ts; a batch costs the sum
 * of its calls) and throttles past a budget in units per second, as Alchemy does:
 * - the budget over fixed 1-second windows, or in Alchemy's current form: a bucket holding 10 seconds of the rate,
 *   refilled continuously;
 * - past it, HTTP 429 (without `Retry-After`, or with one), or — `item` — each batch item past the budget answered
 *   `{"code": 429, "message": "Your app has exceeded its compute units per second capacity…"}` inside a 200 answer
 *   while the items that fit are served (a single request past it: HTTP 429 carrying that error object);
 * - throttled calls are not billed (what Alchemy's pricing page says of 429s), unless `billThrottled`;
 * - a seeded random share of requests (`http`) or items (`item`) answered 429 whatever the budget;
 * - optionally Alchemy's `eth_getLogs` range rule: a range of up to 2,000 blocks is served, a longer one only while
 *   its answer holds at most 10,000 logs, else refused with "this block range should work: [0x…, 0x…]";
 * - optionally a batch size limit: a longer batch has every item refused with -32600 "batch too large" (HTTP 200,
 *   or 413).
 * It counts calls, units and 429s by method.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { PROVIDER } from "../../src/chain/providers.js";
import { ALCHEMY_THROTTLE_MESSAGE, alchemyLogCapError, seededRandom } from "./provider-words.js";

interface RpcMessage {
  id: unknown;
  method: string;
  params: unknown[];
}

export interface Metering {
  /** Cost of a call by method; default Alchemy's classic compute-unit table. */
  costs?: { methods: Readonly<Record<string, number>>; other: number };
  /** The budget in units per second; unset: never throttled for the budget. */
  unitsPerSecond?: number;
  /** `second`: the budget per fixed 1-second window (default); `bucket`: a bucket of 10 s of the rate. */
  window?: "second" | "bucket";
  /** How a throttled call is answered: HTTP 429 for the whole request (default), or per batch item. */
  flavour?: "http" | "item";
  /** With `http`: a `Retry-After` of this many seconds. */
  retryAfterSeconds?: number;
  /** Throttled calls are billed too. Default: not billed. */
  billThrottled?: boolean;
  /** Share of requests (`http`) or items (`item`) answered 429 whatever the budget. */
  randomShare?: number;
  /** Alchemy's `eth_getLogs` rule: ≤ 2,000 blocks, or any range whose answer holds ≤ 10,000 logs. */
  logRangeRule?: boolean;
  /** Batches longer than this have every item refused with -32600 "batch too large". */
  maxBatch?: number;
  /** The HTTP status of that refusal (200 or 413). */
  maxBatchStatus?: 200 | 413;
  seed?: number;
}

export interface Meter {
  /** Calls answered, throttled calls included, by method. */
  calls: Record<string, number>;
  /** Calls answered 429, by method. */
  throttled: Record<string, number>;
  /** Units billed. */
  units: number;
  /** HTTP requests received, and those answered HTTP 429. */
  requests: number;
  throttledRequests: number;
  /** Batches refused for their size; log ranges refused by the range rule. */
  batchesRefused: number;
  rangesRefused: number;
}

export interface MeteredRpc {
  url: string;
  meter: Meter;
  close(): Promise<void>;
}

const RANGE_BLOCKS = 2_000;
const RANGE_LOGS = 10_000;

/** The budget: whether a call of `cost` units may be served now (and if so, it is spent). */
function budget(metering: Metering): (cost: number) => boolean {
  const rate = metering.unitsPerSecond;
  if (rate === undefined) return () => true;
  if ((metering.window ?? "second") === "second") {
    let window = -1;
    let used = 0;
    return (cost) => {
      const now = Math.floor(Date.now() / 1000);
      if (now !== window) {
        window = now;
        used = 0;
      }
      if (used + cost > rate) return false;
      used += cost;
      return true;
    };
  }
  const capacity = rate * 10;
  let tokens = capacity;
  let last = Date.now();
  return (cost) => {
    const now = Date.now();
    tokens = Math.min(capacity, tokens + ((now - last) * rate) / 1000);
    last = now;
    if (tokens < cost) return false;
    tokens -= cost;
    return true;
  };
}

export async function startMeteredRpc(target: string, metering: Metering = {}): Promise<MeteredRpc> {
  const costs = metering.costs ?? PROVIDER.alchemy.costs!;
  const costOf = (method: string) => (Object.hasOwn(costs.methods, method) ? costs.methods[method]! : costs.other);
  const flavour = metering.flavour ?? "http";
  const draw = seededRandom(metering.seed ?? 1);
  const admit = budget(metering);
  const meter: Meter = {
    calls: {},
    throttled: {},
    units: 0,
    requests: 0,
    throttledRequests: 0,
    batchesRefused: 0,
    rangesRefused: 0,
  };
  const count = (table: Record<string, number>, method: string) => {
    table[method] = (table[method] ?? 0) + 1;
  };
  const bill = (call: RpcMessage) => {
    count(meter.calls, call.method);
    meter.units += costOf(call.method);
  };
  const throttledCall = (call: RpcMessage) => {
    count(meter.calls, call.method);
    count(meter.throttled, call.method);
    if (metering.billThrottled) meter.units += costOf(call.method);
  };
  const throttleError = (id: unknown) => ({
    jsonrpc: "2.0",
    id,
    error: { code: 429, message: ALCHEMY_THROTTLE_MESSAGE },
  });

  const forward = async (body: unknown): Promise<unknown> => {
    const res = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return res.json();
  };

  /** Alchemy's refusal of a log range, or the answer where the rule lets a long range through; else undefined. */
  const rangeRule = async (call: RpcMessage): Promise<unknown> => {
    if (!metering.logRangeRule || call.method !== "eth_getLogs") return undefined;
    const filter = call.params[0] as { fromBlock?: string; toBlock?: string };
    if (!filter?.fromBlock || !filter.toBlock) return undefined;
    const from = Number(filter.fromBlock);
    const to = Number(filter.toBlock);
    if (to - from + 1 <= RANGE_BLOCKS) return undefined;
    const answer = (await forward({ jsonrpc: "2.0", id: call.id, method: call.method, params: call.params })) as {
      result?: { blockNumber: string }[];
    };
    const logs = answer.result ?? [];
    if (logs.length <= RANGE_LOGS) return answer;
    // The range that works from `from`: up to the block before the one holding the 10,001st log, or 2K blocks.
    const end = Math.max(from + RANGE_BLOCKS - 1, Number(logs[RANGE_LOGS]!.blockNumber) - 1);
    meter.rangesRefused++;
    return alchemyLogCapError(call.id, from, end);
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as RpcMessage | RpcMessage[];
    const batch = Array.isArray(body);
    const calls = batch ? body : [body];
    meter.requests++;

    if (batch && metering.maxBatch !== undefined && calls.length > metering.maxBatch) {
      meter.batchesRefused++;
      const refusal = calls.map((c) => ({
        jsonrpc: "2.0",
        id: c.id,
        error: { code: -32600, message: `batch too large: at most ${metering.maxBatch} requests` },
      }));
      return send(res, metering.maxBatchStatus ?? 200, refusal);
    }

    const whole429 = () => {
      meter.throttledRequests++;
      for (const call of calls) throttledCall(call);
      const headers: Record<string, string> =
        metering.retryAfterSeconds !== undefined ? { "retry-after": String(metering.retryAfterSeconds) } : {};
      return send(res, 429, batch ? calls.map((c) => throttleError(c.id)) : throttleError(calls[0]!.id), headers);
    };

    // Which calls are served: the whole request (`http`) or item by item (`item`).
    // A single call throttled in the `item` flavour: HTTP 429 carrying Alchemy's error object, as Alchemy answers.
    let served: boolean[];
    if (flavour === "http" || !batch) {
      const share = metering.randomShare ?? 0;
      if (share > 0 && draw() < share) return whole429();
      const cost = calls.reduce((sum, c) => sum + costOf(c.method), 0);
      if (!admit(cost)) return whole429();
      served = calls.map(() => true);
    } else {
      const share = metering.randomShare ?? 0;
      served = calls.map((c) => !(share > 0 && draw() < share) && admit(costOf(c.method)));
    }

    const replies: unknown[] = new Array(calls.length);
    const passed: number[] = [];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      if (!served[i]) {
        throttledCall(call);
        replies[i] = throttleError(call.id);
        continue;
      }
      bill(call);
      const own = await rangeRule(call);
      if (own !== undefined) replies[i] = own;
      else passed.push(i);
    }
    if (passed.length > 0) {
      const forwarded = (await forward(passed.map((i) => calls[i]))) as { id: unknown }[];
      const byId = new Map(forwarded.map((r) => [r.id, r]));
      for (const i of passed) replies[i] = byId.get(calls[i]!.id);
    }
    send(res, 200, batch ? replies : replies[0]);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) send(res, 500, { error: String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    meter,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
