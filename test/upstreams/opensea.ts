/**
 * A local OpenSea-compatible server on loopback (API v2), built from the facts in docs/opensea.md: the contract
 * endpoint (`collection` null for a contract without one), the events endpoints by collection, by NFT and the
 * general one, `X-API-KEY` auth, `limit` 1..200, `event_type` from OpenSea's enum as repeated keys, `after`/`before`
 * in Unix seconds, newest first, a `next` cursor (base64 of a JSON array holding one id, as OpenSea's are) that
 * points after an event (so events arriving meanwhile never shift later pages) and `"next": null` on the last page,
 * and errors as `{"errors": [...]}`. Events are served exactly as given (real answers from test/fixtures/opensea).
 *
 * Assumptions where no public source says: an unknown cursor is a 400; a transfer from the zero address also
 * answers the `mint` filter; a bad key is a 401 whose body is the JSON string `"Invalid API key"` (what the older
 * API answered, per ProjectOpenSea/opensea-sdk#411).
 *
 * Faults are queued with `fault()`: any status/body/headers (429 and 599 with or without Retry-After, 5xx, HTML),
 * a slow answer, a reset, a body cut off with its length announced (`dropMidBody`) or without (`truncate`: the
 * connection ends cleanly after half the body), and `loop` (the page's `next` is the cursor it was asked with).
 *
 * `script()` replaces the events endpoints' paging with fixed pages keyed by the cursor asked with (`""` for the
 * first page): any graph of cursors, cycles included, and any events on each page, repeats included.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { stringifyJson } from "../../src/core/json.js";

export const OPENSEA_KEY = "d5c0a7e1f3b24c6f8a9e0b1c2d3e4f50";
const ZERO = "0x0000000000000000000000000000000000000000";
const EVENT_TYPES = ["sale", "transfer", "mint", "listing", "offer", "trait_offer", "collection_offer"];

export type OpenSeaEvent = Record<string, unknown>;

export interface ContractInfo {
  collection: string | null;
  contract_standard: string;
  name: string;
}

export interface OpenSeaDataset {
  /** Lower-case contract address → what the contract endpoint answers. */
  contracts: Map<string, ContractInfo>;
  /** Collection slug → its events (any order; served newest first, ties in the order given). */
  collections: Map<string, OpenSeaEvent[]>;
  /** Events in no collection served here (other chains' events for the general endpoint). */
  other?: OpenSeaEvent[];
}

export interface OpenSeaFault {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  destroy?: boolean;
  /** Send the status, headers (with the full length) and half the body, then drop the connection. */
  dropMidBody?: boolean;
  /** A normal answer whose body stops halfway, without a length, on a connection that then closes cleanly. */
  truncate?: boolean;
  /** A normal answer whose `next` is the cursor the request carried. */
  loop?: boolean;
  /** Serve this fault to this many requests in a row (default 1). */
  times?: number;
  /** Let this many requests through normally first. */
  after?: number;
}

export interface OpenSeaRequest {
  at: number;
  path: string;
  query: URLSearchParams;
  apiKey: string | undefined;
}

export interface OpenSeaServer {
  url: string;
  requests: OpenSeaRequest[];
  fault(...faults: OpenSeaFault[]): void;
  clearFaults(): void;
  /** Events endpoints answer these pages, by the cursor asked with (`""`: none); `undefined` ends the script. */
  script(pages: Map<string, ScriptedPage> | undefined): void;
  /** Adds events to a collection, as if OpenSea had just seen them. */
  add(collection: string, events: OpenSeaEvent[]): void;
  close(): Promise<void>;
}

/** A scripted page: its events and its `next` (null on the last page). */
export interface ScriptedPage {
  asset_events: OpenSeaEvent[];
  next: string | null;
}

interface Held {
  event: OpenSeaEvent;
  seq: number;
  collection: string | undefined;
}

const own = (o: unknown, key: string): unknown =>
  o && typeof o === "object" && Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined;

/** The `event_type` filter values an event answers to. */
function filterTypes(event: OpenSeaEvent): string[] {
  const type = own(event, "event_type");
  if (type === "order") {
    const orderType = own(event, "order_type");
    return [orderType === "item_offer" ? "offer" : String(orderType)];
  }
  if (type === "transfer" && String(own(event, "from_address")).toLowerCase() === ZERO) return ["transfer", "mint"];
  return [String(type)];
}

function nftOf(event: OpenSeaEvent): { contract: string; identifier: string } | undefined {
  const nft = own(event, "nft") ?? own(event, "asset");
  const contract = own(nft, "contract");
  const identifier = own(nft, "identifier");
  return typeof contract === "string" && typeof identifier === "string"
    ? { contract: contract.toLowerCase(), identifier }
    : undefined;
}

export async function startOpenSea(dataset: OpenSeaDataset): Promise<OpenSeaServer> {
  const requests: OpenSeaRequest[] = [];
  const faults: OpenSeaFault[] = [];
  const held: Held[] = [];
  let seq = 0;
  const load = (collection: string | undefined, events: OpenSeaEvent[]) => {
    for (const event of events) held.push({ event, seq: seq++, collection });
    // Newest first; events of one second keep the order they were given in.
    held.sort(
      (a, b) => Number(own(b.event, "event_timestamp")) - Number(own(a.event, "event_timestamp")) || a.seq - b.seq,
    );
  };
  for (const [slug, events] of dataset.collections) load(slug, events);
  load(undefined, dataset.other ?? []);
  /** cursor → the seq of the event the next page starts after, and the request it belongs to. */
  const cursors = new Map<string, { after: number; scope: string }>();
  let scripted: Map<string, ScriptedPage> | undefined;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(typeof body === "string" ? body : stringifyJson(body));
  };
  const errors = (res: ServerResponse, status: number, ...messages: string[]) =>
    send(res, status, { errors: messages });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const apiKey = req.headers["x-api-key"] as string | undefined;
    requests.push({ at: Date.now(), path: url.pathname, query: url.searchParams, apiKey });

    const fault = faults[0]?.after ? undefined : faults[0];
    if (faults[0]?.after) faults[0].after--;
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.times <= 0) faults.shift();
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault.destroy) return void req.socket.destroy();
      if (fault.status !== undefined) {
        const body = fault.body ?? "";
        res.writeHead(fault.status, {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          ...fault.headers,
        });
        if (fault.dropMidBody) return void res.write(body.slice(0, body.length >> 1), () => req.socket.destroy());
        return void res.end(body);
      }
    }

    if (req.method !== "GET") return errors(res, 405, "Method not allowed");
    if (!apiKey || apiKey !== OPENSEA_KEY) return send(res, 401, '"Invalid API key"');

    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    if (parts[0] !== "api" || parts[1] !== "v2") return errors(res, 404, "Not found");

    // GET /api/v2/chain/{chain}/contract/{address}
    if (parts[2] === "chain" && parts[4] === "contract" && parts.length === 6) {
      const info = dataset.contracts.get(parts[5]!.toLowerCase());
      if (parts[3] !== "ethereum" || !info) return errors(res, 404, `Contract ${parts[5]} not found`);
      return send(res, 200, { address: parts[5]!.toLowerCase(), chain: "ethereum", ...info });
    }

    if (parts[2] !== "events") return errors(res, 404, "Not found");
    if (scripted) {
      const page = scripted.get(url.searchParams.get("next") ?? "");
      return page ? send(res, 200, page) : errors(res, 400, "Invalid cursor");
    }
    const q = url.searchParams;
    const limitRaw = q.get("limit");
    const limit = limitRaw === null ? 20 : Number(limitRaw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
      return errors(res, 400, "limit: must be an integer between 1 and 200");
    }
    const types = q.getAll("event_type");
    const badType = types.find((t) => !EVENT_TYPES.includes(t));
    if (badType !== undefined) return errors(res, 400, `event_type: invalid value '${badType}'`);
    for (const bound of ["after", "before"]) {
      const value = q.get(bound);
      if (value !== null && !/^\d+$/.test(value)) return errors(res, 400, `${bound}: must be a Unix timestamp`);
    }

    let rows: Held[];
    if (parts.length === 3)
      rows = held; // GET /api/v2/events: every chain
    else if (parts[3] === "collection" && parts.length === 5) {
      if (!dataset.collections.has(parts[4]!)) return errors(res, 404, `Collection ${parts[4]} not found`);
      rows = held.filter((h) => h.collection === parts[4]);
    } else if (parts[3] === "chain" && parts[5] === "contract" && parts[7] === "nfts" && parts.length === 9) {
      const [chain, contract, identifier] = [parts[4], parts[6]!.toLowerCase(), parts[8]];
      if (!dataset.contracts.has(contract)) return errors(res, 404, `Contract ${contract} not found`);
      rows = held.filter((h) => {
        const nft = nftOf(h.event);
        return own(h.event, "chain") === chain && nft?.contract === contract && nft.identifier === identifier;
      });
    } else return errors(res, 404, "Not found");

    const after = q.get("after");
    const before = q.get("before");
    rows = rows.filter((h) => {
      const at = Number(own(h.event, "event_timestamp"));
      if (after !== null && at <= Number(after)) return false;
      if (before !== null && at >= Number(before)) return false;
      return types.length === 0 || filterTypes(h.event).some((t) => types.includes(t));
    });
    const scope = `${url.pathname}|${[...types].sort().join(",")}|${after}|${before}`;

    let start = 0;
    const cursor = q.get("next");
    if (cursor !== null) {
      const known = cursors.get(cursor);
      if (!known || known.scope !== scope) return errors(res, 400, "Invalid cursor");
      start = rows.findIndex((h) => h.seq === known.after) + 1;
    }
    const page = rows.slice(start, start + limit);
    let next: string | null = null;
    if (fault?.loop) next = cursor ?? issue(scope, -1);
    else if (start + limit < rows.length) next = issue(scope, page[page.length - 1]!.seq);
    const body = stringifyJson({ asset_events: page.map((h) => h.event), next });
    if (fault?.truncate) {
      res.writeHead(200, { "content-type": "application/json", connection: "close" });
      return void res.end(body.slice(0, body.length >> 1));
    }
    send(res, 200, body);
  };

  /** A cursor in OpenSea's form: base64 of a JSON array holding one id. */
  const issue = (scope: string, after: number): string => {
    const token = Buffer.from(JSON.stringify([randomUUID()])).toString("base64");
    cursors.set(token, { after, scope });
    return token;
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
    requests,
    fault: (...f) => faults.push(...f),
    script: (pages) => {
      scripted = pages;
    },
    clearFaults: () => {
      faults.length = 0;
    },
    add: (collection, events) => {
      dataset.collections.set(collection, [...(dataset.collections.get(collection) ?? []), ...events]);
      load(collection, events);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
