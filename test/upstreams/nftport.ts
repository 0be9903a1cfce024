/**
 * A local NFTPort-compatible server on loopback, faithful to NFTPort's API v0 as documented and as seen in real data:
 * paths, raw-key auth (401 authorization_missing / invalid_api_key, 403 invalid_credentials), `chain` and `type`
 * validation (422 NOK envelopes), repeated `type` keys, page_size 1..50 (default 50), opaque continuations
 * (`<epoch ms>_<24 hex>` per contract/token, base64 of `<epoch s>_<24 hex>` chain-wide) present only on full
 * pages, newest-first ordering per contract/token and oldest-first chain-wide, 404 not_found for an empty
 * token history, 429 without a `response` key. Faults (429 with/without Retry-After, 5xx, HTML, empty or broken
 * bodies, slow answers, dropped connections) are queued by tests with `fault()`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseJson, stringifyJson } from "../../src/core/json.js";
import { trickle } from "./trickle.js";

export const VALID_KEY = "3f2b8c1e-6a4d-4e8f-9b7a-1c2d3e4f5a6b";
export const SUSPENDED_KEY = "00000000-0000-4000-8000-00000000dead";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** The `type` filter values NFTPort's API v0 docs list for every transactions endpoint: no `bid`. */
const FILTER_TYPES = ["transfer", "mint", "burn", "sale", "list", "all"];

export type Rec = Record<string, unknown> & { type: string; block_number?: number; transaction_date: string };

export interface Fault {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (a slow upstream). */
  delayMs?: number;
  /** Close the socket without answering (connection reset). */
  destroy?: boolean;
  /** Send the status, headers and half of `body`, then drop the connection (a broken answer). */
  dropMidBody?: boolean;
  /** Send the status and headers at once, then `body` one byte every this many ms (an answer too slow to finish). */
  trickleMs?: number;
  /** Serve this fault to this many requests in a row (default 1). */
  times?: number;
  /** Let this many requests through normally first (a failure midway through paging). */
  after?: number;
}

/** The real 429 body NFTPort sent (S4b): no `response` key. */
export const RATE_LIMIT_BODY =
  '{"error":{"status_code":429,"code":"too_many_requests","message":"Too many requests hit the API too quickly (per one second). We recommend an exponential backoff of your requests. See rate limit details at https://docs.nftport.xyz/docs/nftport/ZG9jOjQ1ODQ4NzQ4-quotas. If you need higher limits, see https://www.nftport.xyz/pricing"}}';

/** Ready-made faults, one per way an upstream answer can go wrong. */
export const FAULTS = {
  rateLimited: (retryAfter?: string): Fault => ({
    status: 429,
    body: RATE_LIMIT_BODY,
    ...(retryAfter === undefined ? {} : { headers: { "retry-after": retryAfter } }),
  }),
  serverErrorJson: (): Fault => ({
    status: 500,
    body: '{"response":"NOK","error":{"status_code":500,"code":"internal_error","message":"Internal server error."}}',
  }),
  badGatewayHtml: (): Fault => ({
    status: 502,
    headers: { "content-type": "text/html" },
    body: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>",
  }),
  unavailableEmpty: (): Fault => ({ status: 503, body: "" }),
  okEmptyBody: (): Fault => ({ status: 200, body: "" }),
  okInvalidJson: (): Fault => ({ status: 200, body: '{"response":"OK","transactions":[{"type":"sale",' }),
  okHtml: (): Fault => ({
    status: 200,
    headers: { "content-type": "text/html" },
    body: "<!doctype html><title>Captive portal</title><p>Please log in</p>",
  }),
  reset: (): Fault => ({ destroy: true }),
  dropMidBody: (): Fault => ({
    status: 200,
    body: '{"response":"OK","transactions":[]}'.repeat(40),
    dropMidBody: true,
  }),
  slow: (delayMs: number): Fault => ({ delayMs }),
  /** 200 and its headers at once, then a page one byte every `everyMs`. */
  trickle: (everyMs: number): Fault => ({
    status: 200,
    body: '{"response":"OK","transactions":[]}'.repeat(40),
    trickleMs: everyMs,
  }),
} as const;

export interface RequestLog {
  /** When it arrived (ms since the epoch). */
  at: number;
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  headers: IncomingMessage["headers"];
}

export interface NftportServer {
  url: string;
  server: Server;
  requests: RequestLog[];
  /** Queues faults: each next request gets the next fault instead of a normal answer. */
  fault(...faults: Fault[]): void;
  /** Drops every queued fault. */
  clearFaults(): void;
  /** Adds records as if the upstream had just learnt of them (a watch's new activity). */
  add(contract: string, records: Rec[]): void;
  close(): Promise<void>;
}

export interface Dataset {
  /** Records per lower-case contract address (any order; the server sorts). */
  byContract: Map<string, Rec[]>;
}

/** The sort key of a record: block number (or its time, for off-chain rows), then the order it was loaded in. */
function recordKey(r: Rec): [number, number] {
  return [r.block_number ?? Date.parse(`${r.transaction_date}Z`) / 1000, Number(r.__seq ?? 0)];
}

function tokenOf(r: Rec): string {
  const nft = r.nft as { token_id?: string } | undefined;
  return String(nft?.token_id ?? r.token_id);
}

function contractOf(r: Rec): string {
  const nft = r.nft as { contract_address?: string } | undefined;
  return String(nft?.contract_address ?? r.contract_address).toLowerCase();
}

/**
 * NFTPort filter semantics: `all` is no filter; `list` also returns `cancel_list`. On the by-NFT endpoint `sale`
 * also returns `cancel_list` rows, as every real `type=sale` response did.
 */
function matches(r: Rec, types: string[], byNft: boolean): boolean {
  if (types.length === 0 || types.includes("all")) return true;
  return types.some(
    (t) => r.type === t || r.type === `cancel_${t}` || (byNft && t === "sale" && r.type === "cancel_list"),
  );
}

export interface NftportOptions {
  /** A key's quota: past this many requests in a 1-second window, NFTPort's 429 (benchmarks of shared reads). */
  requestsPerSecond?: number;
  /** Adds `x-served-at` (ms since the epoch) to every answer, so a client can tell how old an answer is. */
  stampServedAt?: boolean;
}

export async function startNftport(dataset: Dataset, options: NftportOptions = {}): Promise<NftportServer> {
  const faults: Fault[] = [];
  let windowStart = 0;
  let inWindow = 0;
  /** Whether this request is beyond the quota of the current 1-second window. */
  const overQuota = (now: number): boolean => {
    if (options.requestsPerSecond === undefined) return false;
    if (now - windowStart >= 1000) {
      windowStart = now;
      inWindow = 0;
    }
    return ++inWindow > options.requestsPerSecond;
  };
  const requests: RequestLog[] = [];
  // Stable, server-side cursors: continuation string -> position after which the next page starts.
  const cursors = new Map<string, { scope: string; index: number }>();
  let cursorSeq = 0;

  const all: Rec[] = [];
  let seq = 0;
  const load = (contract: string, recs: Rec[]) => {
    for (const r of recs) {
      if (r.__seq === undefined)
        Object.defineProperty(r, "__seq", { value: seq++, enumerable: false, configurable: true });
      if (contractOf(r) !== contract) throw new Error(`fixture record under ${contract} belongs to ${contractOf(r)}`);
      all.push(r);
    }
  };
  for (const [contract, recs] of dataset.byContract) load(contract, recs);
  const ascending = (a: Rec, b: Rec) => {
    const [ka, ta] = recordKey(a);
    const [kb, tb] = recordKey(b);
    return ka - kb || ta - tb;
  };
  all.sort(ascending);
  const newestFirst = (a: Rec, b: Rec) => recordKey(b)[0] - recordKey(a)[0] || recordKey(a)[1] - recordKey(b)[1];
  // Sorted once per contract, so that a large dataset pages fast (benchmarks page through 10,000 rows).
  const sorted = new Map<string, Rec[]>();
  const sortedByContract = (contract: string): Rec[] => {
    let rows = sorted.get(contract);
    if (!rows) {
      rows = (dataset.byContract.get(contract) ?? []).slice().sort(newestFirst);
      sorted.set(contract, rows);
    }
    return rows;
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = typeof body === "string" ? body : stringifyJson(body);
    const stamp = options.stampServedAt ? { "x-served-at": String(Date.now()) } : {};
    res.writeHead(status, { "content-type": "application/json", ...stamp, ...headers });
    res.end(text);
  };
  const nok = (res: ServerResponse, status: number, code: string, message: string) =>
    send(res, status, { response: "NOK", error: { status_code: status, code, message } });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    requests.push({
      at: Date.now(),
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.authorization,
      headers: req.headers,
    });
    if (overQuota(Date.now())) return send(res, 429, RATE_LIMIT_BODY);
    const fault = faults[0]?.after ? undefined : faults[0];
    if (faults[0]?.after) faults[0].after--;
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.times <= 0) faults.shift();
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault.destroy) {
        req.socket.destroy();
        return;
      }
      if (fault.status !== undefined) {
        const body = fault.body ?? "";
        if (fault.trickleMs) return trickle(res, fault.status, body, fault.trickleMs, fault.headers);
        res.writeHead(fault.status, {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          ...fault.headers,
        });
        if (fault.dropMidBody) {
          res.write(body.slice(0, Math.floor(body.length / 2)), () => req.socket.destroy());
          return;
        }
        res.end(body);
        return;
      }
    }

    if (req.method !== "GET") return nok(res, 405, "method_not_allowed", "Method Not Allowed");
    const auth = req.headers.authorization;
    if (!auth) return nok(res, 401, "authorization_missing", "Authorization header is missing.");
    if (!UUID.test(auth)) return nok(res, 401, "invalid_api_key", "API key is not valid.");
    if (auth === SUSPENDED_KEY) return nok(res, 403, "account_suspended", "Your account is suspended.");
    if (auth !== VALID_KEY) return nok(res, 403, "invalid_credentials", "Invalid credentials.");

    const q = url.searchParams;
    if (q.has("page_number")) return nok(res, 422, "page_number_not_supported", "Use continuation instead.");
    const chain = q.get("chain") ?? "ethereum";
    if (!["ethereum", "polygon"].includes(chain)) {
      return nok(
        res,
        422,
        "invalid_enumeration",
        "value is not a valid enumeration member; permitted: 'ethereum', 'polygon'",
      );
    }
    const pageSizeRaw = q.get("page_size");
    const pageSize = pageSizeRaw === null ? 50 : Number(pageSizeRaw);
    if (!Number.isInteger(pageSize)) return nok(res, 422, "invalid_type", "page_size: value is not a valid integer");
    if (pageSize < 1 || pageSize > 50)
      return nok(res, 422, "value_error", "page_size: ensure this value is between 1 and 50");

    const parts = url.pathname.split("/").filter(Boolean); // v0 transactions nfts <contract> <token>
    if (parts[0] !== "v0" || parts[1] !== "transactions") return nok(res, 404, "not_found", "Not Found");
    const chainWide = parts.length === 2;
    const allowed = FILTER_TYPES;
    const types = q.getAll("type");
    const badType = types.find((t) => !allowed.includes(t));
    if (badType !== undefined) {
      return nok(
        res,
        422,
        "invalid_enumeration",
        `type: value is not a valid enumeration member; permitted: ${allowed.map((t) => `'${t}'`).join(", ")}`,
      );
    }

    let rows: Rec[];
    let scope: string;
    if (chainWide) {
      const from = q.get("from_block");
      const to = q.get("to_block");
      rows = all.filter(
        (r) =>
          r.block_number !== undefined &&
          (from === null || r.block_number >= Number(from)) &&
          (to === null || r.block_number <= Number(to)),
      );
      scope = `chain|${from}|${to}`;
    } else {
      if (parts[2] !== "nfts" || parts.length > 5) return nok(res, 404, "not_found", "Not Found");
      const contract = decodeURIComponent(parts[3] ?? "");
      if (!ADDRESS.test(contract)) return nok(res, 422, "invalid_address", "Invalid contract address.");
      const token = parts[4] === undefined ? undefined : decodeURIComponent(parts[4]);
      // Newest block first; rows of one block keep the order the upstream sent them in.
      rows = sortedByContract(contract.toLowerCase());
      if (token !== undefined) rows = rows.filter((r) => tokenOf(r) === token);
      scope = `${contract.toLowerCase()}|${token}`;
    }
    rows = rows.filter((r) => matches(r, types, parts.length === 5));
    scope += `|${types.slice().sort().join(",")}`;

    let start = 0;
    const continuation = q.get("continuation");
    if (continuation !== null) {
      const cursor = cursors.get(continuation);
      if (!cursor || cursor.scope !== scope) {
        return nok(res, 422, "invalid_continuation_string", "Invalid continuation string.");
      }
      start = cursor.index;
    }
    const page = rows.slice(start, start + pageSize);
    if (page.length === 0 && parts.length === 5 && start === 0) {
      return nok(res, 404, "not_found", "The requested transactions was not found in our database.");
    }
    const body: Record<string, unknown> = { response: "OK", transactions: page };
    if (page.length === pageSize) {
      // Like the real API: a continuation only on a full page, derived from the last row's time.
      const last = page[page.length - 1]!;
      const id = (++cursorSeq).toString(16).padStart(24, "0");
      const epochS = Math.floor(Date.parse(`${last.transaction_date}Z`) / 1000);
      const token = chainWide ? Buffer.from(`${epochS}_${id}`).toString("base64") : `${epochS * 1000}_${id}`;
      cursors.set(token, { scope, index: start + page.length });
      body.continuation = token;
    }
    send(res, 200, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    requests,
    fault: (...f) => faults.push(...f),
    clearFaults: () => {
      faults.length = 0;
    },
    add: (contract, records) => {
      const key = contract.toLowerCase();
      dataset.byContract.set(key, [...(dataset.byContract.get(key) ?? []), ...records]);
      load(key, records);
      all.sort(ascending);
      sorted.delete(key);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Reads a JSON fixture exactly (integers beyond 2^53 kept). */
export function exactFixture(text: string): unknown {
  return parseJson(text);
}
