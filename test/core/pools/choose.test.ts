/**
 * src/core/pools/choose.ts on its own: `poolsFor` picks a process's engines from the proxy settings of an env record,
 * once per setting: without a proxy, Node's client for every call and one undici pool for paged reads (shared by
 * every such setting); behind a proxy, one pool through it and none for paging. Calls go through a loopback server
 * and the loopback forward proxy (test/upstreams/proxy.ts), which logs every tunnel.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poolsFor } from "../../../src/core/pools/choose.js";
import type { UpstreamPool } from "../../../src/core/upstream-pool.js";
import { type ForwardProxy, startForwardProxy } from "../../upstreams/proxy.js";

let server: Server;
let url: string;
let proxy: ForwardProxy;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(`seen ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy = await startForwardProxy();
});

afterAll(async () => {
  await proxy?.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const get = async (pool: UpstreamPool, path: string) =>
  (await pool.exchange({ method: "GET", url: `${url}${path}`, timeoutMs: 5_000 })).body;

describe("poolsFor", () => {
  it("without a proxy: a pool for every call and one for paged reads, both reaching the upstream directly", async () => {
    const pools = poolsFor({});
    expect(pools.paging).toBeDefined();
    expect(pools.paging).not.toBe(pools.pool);
    const before = proxy.tunnels.length;
    expect(await get(pools.pool, "/a")).toBe("seen /a");
    expect(await get(pools.paging!, "/b")).toBe("seen /b");
    expect(proxy.tunnels.length).toBe(before);
  });

  it("gives the same pools to every record with the same proxy setting, whatever else it holds", () => {
    const pools = poolsFor({});
    expect(poolsFor({ NFTPORT_API_KEY: "x", CHAINMAIL_TIMEOUT_MS: "5" })).toBe(pools);
    const behind = poolsFor({ HTTP_PROXY: proxy.url });
    expect(poolsFor({ HTTP_PROXY: proxy.url, OPENSEA_API_KEY: "y" })).toBe(behind);
    // The lower-case variable is the same setting.
    expect(poolsFor({ http_proxy: proxy.url })).toBe(behind);
    expect(behind).not.toBe(pools);
  });

  it("shares the one paging pool between every setting without a proxy", () => {
    const plain = poolsFor({});
    const other = poolsFor({ NO_PROXY: "example.com" });
    expect(other).not.toBe(plain);
    expect(other.pool).not.toBe(plain.pool);
    expect(other.paging).toBe(plain.paging);
  });

  it("behind a proxy: one pool through it for every call, none of its own for paged reads", async () => {
    const pools = poolsFor({ HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url });
    expect(pools.paging).toBeUndefined();
    const before = proxy.tunnels.length;
    expect(await get(pools.pool, "/through")).toBe("seen /through");
    expect(proxy.tunnels.slice(before)).toEqual([new URL(url).host]);
  });

  it("reaches a NO_PROXY host directly, even behind a proxy", async () => {
    const pools = poolsFor({ HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" });
    const before = proxy.tunnels.length;
    expect(await get(pools.pool, "/around")).toBe("seen /around");
    expect(proxy.tunnels.length).toBe(before);
  });

  it("refuses a proxy that is not a URL, naming the variable it was given in and never the value", () => {
    const refusal = (() => {
      try {
        poolsFor({ https_proxy: "user:s3cret@proxy.internal:3128" });
      } catch (err) {
        return err as Error & { code?: string };
      }
    })();
    expect(refusal?.code).toBe("invalid_input");
    expect(refusal?.message).toContain("https_proxy");
    expect(refusal?.message).not.toContain("s3cret");
  });
});
