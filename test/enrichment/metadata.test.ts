/**
 * Token metadata read from a server of our own on loopback (src/enrichment/metadata.ts, metadata-fetch.ts): a good
 * document gives its name and image (ipfs:// through the gateway); every hostile answer (slow, silent, huge,
 * redirect loops, redirects to private addresses, the wrong content type, bad JSON, not an object, bad UTF-8, names
 * with control characters, images on private or plain-http hosts) gives a reason and nothing else, within the
 * timeout. The server's own address is the one private address allowed (a set: the rest stay refused). Both
 * fetchers: the guarded one of a process (metadata-fetch.ts) and a workflow host's, through its pool (pool-fetch.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { gatewayUrl, type MetadataSettings, readMetadata } from "../../src/enrichment/metadata.js";
import { guardedGet, guardedLookup } from "../../src/enrichment/metadata-fetch.js";
import { poolFetch } from "../../src/enrichment/pool-fetch.js";
import { type MetadataServer, startMetadataServer } from "../support/enrichment-helpers.js";

let server: MetadataServer;
let base: Omit<MetadataSettings, "fetch">;

beforeAll(async () => {
  server = await startMetadataServer();
  base = {
    ipfsGateway: "https://gateway.example/ipfs/",
    allowPrivate: new Set(["127.0.0.1"]),
    metadataTimeoutMs: 1_500,
    maxBytes: 64 * 1024,
  };
});

afterAll(async () => {
  await server?.close();
});

const FETCHERS = {
  "a process's guarded fetch": guardedGet,
  "a workflow host's pool": poolFetch(loadConfig({}).pool),
} as const;

describe.each(Object.entries(FETCHERS))("a token's metadata through %s", (_, fetch) => {
  let settings: MetadataSettings;
  beforeAll(() => {
    settings = { ...base, fetch };
  });
  const read = (path: string, extra: Partial<MetadataSettings> = {}) =>
    readMetadata(`${server.url}${path}`, { ...settings, ...extra });

  it("gives the name and the image of a good document, ipfs:// through the gateway", async () => {
    expect(await read("/token/2a.json")).toEqual({
      name: "Loopback Cat #2a",
      image: "https://gateway.example/ipfs/bafy2a/image.png",
    });
    // A redirect to a good document is followed.
    expect(await read("/to-good.json")).toMatchObject({ name: "Loopback Cat #7" });
    // image_url stands in for image; __proto__ is a plain key, never a prototype.
    expect(await read("/proto.json")).toEqual({ name: undefined, image: "https://img.example.com/2.png" });
  });

  it("is read from data: URIs, base64 and percent-encoded", async () => {
    const doc = JSON.stringify({ name: "On-chain #1", image: "ipfs://ipfs/bafyOnChain" });
    const expected = { name: "On-chain #1", image: "https://gateway.example/ipfs/bafyOnChain" };
    expect(await readMetadata(`data:application/json;base64,${Buffer.from(doc).toString("base64")}`, settings)).toEqual(
      expected,
    );
    expect(await readMetadata(`data:application/json,${encodeURIComponent(doc)}`, settings)).toEqual(expected);
    expect(await readMetadata(`data:application/json;utf8,${doc}`, settings)).toEqual(expected);
    expect(await readMetadata(`data:text/html;base64,${Buffer.from(doc).toString("base64")}`, settings)).toMatch(
      /content type text\/html/,
    );
    const big = `data:application/json;base64,${Buffer.alloc(settings.maxBytes + 1, 32).toString("base64")}`;
    expect(await readMetadata(big, settings)).toMatch(/size limit/);
  });

  it("gives up on a slow or silent server within the timeout", async () => {
    for (const path of ["/slow.json", "/silent.json"]) {
      const started = Date.now();
      expect(await read(path, { metadataTimeoutMs: 400 })).toMatch(/no answer within 400 ms/);
      expect(Date.now() - started).toBeLessThan(1_500);
    }
  });

  it("refuses a huge answer, announced or streamed, without reading it all", async () => {
    expect(await read("/huge-announced.json")).toMatch(/larger than 65536 bytes \(67108864\)/);
    const started = Date.now();
    expect(await read("/huge-streamed.json")).toMatch(/larger than 65536 bytes/);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("refuses redirect loops and redirects to private addresses, before connecting to them", async () => {
    expect(await read("/loop.json")).toMatch(/more than 3 redirects/);
    expect(await read("/to-metadata-service.json")).toMatch(/169\.254\.169\.254.*refused: a private address/);
    expect(await read("/to-other-loopback.json")).toMatch(/refused: a private address \(127\.0\.0\.2\)/);
    expect(await read("/to-ipv6-loopback.json")).toMatch(/refused: a private address/);
    expect(await read("/to-localhost.json")).toMatch(/refused: a local host name/);
  });

  it("refuses the server itself once private addresses are not allowed, and asks it nothing", async () => {
    const before = server.asked.length;
    expect(await read("/token/1.json", { allowPrivate: false })).toMatch(/refused: a private address \(127\.0\.0\.1\)/);
    expect(server.asked.length).toBe(before);
    // CHAINMAIL_FETCH_PRIVATE=true lets every private address through.
    expect(await read("/token/1.json", { allowPrivate: true })).toMatchObject({ name: "Loopback Cat #1" });
  });

  it("refuses a host whose name resolves to a private address, at the connection's own lookup", async () => {
    const refusal = await new Promise<Error | null>((resolve) =>
      guardedLookup(false)("localhost", { all: true }, (err) => resolve(err)),
    );
    expect(refusal?.message).toMatch(/localhost resolves to a private address/);
    const allowed = await new Promise<Error | null>((resolve) =>
      guardedLookup(true)("localhost", { all: true }, (err) => resolve(err)),
    );
    expect(allowed).toBeNull();
  });

  it("refuses the wrong content type, bad JSON, bad UTF-8, non-objects and error statuses", async () => {
    expect(await read("/html.json")).toMatch(/content type text\/html/);
    expect(await read("/image.json")).toMatch(/content type image\/png/);
    expect(await read("/bad.json")).toMatch(/not a JSON object/);
    expect(await read("/array.json")).toMatch(/not a JSON object/);
    // Bad UTF-8 is refused where the bytes are seen; a host's engine hands text (its bad bytes replaced): nothing named.
    if (fetch === guardedGet) expect(await read("/not-utf8.json")).toMatch(/not a JSON object/);
    else expect(await read("/not-utf8.json")).toEqual({ name: undefined, image: undefined });
    expect(await read("/status-500.json")).toMatch(/HTTP 500/);
    expect(await read("/missing.json")).toMatch(/HTTP 404/);
  });

  it("cleans names and drops images a mail must not show (private hosts, plain http)", async () => {
    expect(await read("/tricky.json")).toEqual({ name: "Evil gnp.exe Cat", image: undefined });
    expect(await read("/http-image.json")).toEqual({ name: "plain http image", image: undefined });
  });

  it("rewrites ipfs:// and ar:// through their gateways, other URIs as they are", () => {
    expect(gatewayUrl("ipfs://bafyX/1.json", "https://ipfs.io/ipfs/")).toBe("https://ipfs.io/ipfs/bafyX/1.json");
    expect(gatewayUrl("ipfs://ipfs/bafyX", "https://gw.example/ipfs")).toBe("https://gw.example/ipfs/bafyX");
    expect(gatewayUrl("ar://abc", "https://ipfs.io/ipfs/")).toBe("https://arweave.net/abc");
    expect(gatewayUrl("https://a.example/1", "https://ipfs.io/ipfs/")).toBe("https://a.example/1");
  });
});
