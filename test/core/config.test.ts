/**
 * src/core/config.ts on its own: what `loadConfig` / `configFrom` read from an env record (defaults, an upstream's own
 * timeout and retries standing in for the shared ones, base URLs without trailing slashes, the index database's two
 * names, the feed address in lower case), which pools the upstreams get, and `defaultConfig` read once. Each
 * variable's rule is test/core/env.schema.test.ts; the pools themselves are test/core/pools/.
 */
import { describe, expect, it } from "vitest";
import { configFrom, defaultConfig, loadConfig } from "../../src/core/config.js";
import { poolsFor } from "../../src/core/pools/choose.js";
import type { UpstreamPool } from "../../src/core/upstream-pool.js";

/** A pool that is only an identity to compare with: configFrom must hand it on, never call it. */
const marker = (): UpstreamPool => ({
  exchange: () => Promise.reject(new Error("not called in these tests")),
  wait: () => Promise.resolve(),
});

describe("loadConfig", () => {
  it("fills every default from an empty record", () => {
    const config = loadConfig({});
    expect(config.nftport).toMatchObject({ baseUrl: "https://api.nftport.xyz", apiKey: undefined, timeoutMs: 30_000 });
    expect(config.nftport.retry).toEqual({ maxRetries: 4, baseDelayMs: 500, maxDelayMs: 20_000, budgetMs: 120_000 });
    expect(config.opensea).toMatchObject({
      baseUrl: "https://api.opensea.io",
      ethUsdFeed: "0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419",
    });
    expect(config.mailjet).toMatchObject({ baseUrl: "https://api.mailjet.com", concurrency: 4, userId: undefined });
    expect(config.service).toMatchObject({ baseUrl: "", token: undefined });
    expect(config.indexDb).toBe("./data/index.sqlite");
    expect(config.indexRpc).toMatchObject({
      url: undefined,
      wsUrl: undefined,
      throttleBudgetMs: 600_000,
      lagBudgetMs: 180_000,
      provider: undefined,
    });
    expect([config.nftSource, config.emailTransport, config.outboxDir]).toEqual([
      "nftport",
      "mailjet",
      "./data/outbox",
    ]);
  });

  it("lets an upstream's own timeout and retries stand in for the shared ones, for that upstream alone", () => {
    const config = loadConfig({
      CHAINMAIL_TIMEOUT_MS: "1000",
      CHAINMAIL_MAX_RETRIES: "2",
      CHAINMAIL_RETRY_BASE_MS: "7",
      NFTPORT_TIMEOUT_MS: "2500",
      OPENSEA_MAX_RETRIES: "0",
      INDEX_RPC_TIMEOUT_MS: "900",
      INDEX_RPC_MAX_RETRIES: "9",
      CHAINMAIL_SERVICE_TIMEOUT_MS: "3000",
    });
    expect([config.nftport.timeoutMs, config.nftport.retry.maxRetries]).toEqual([2_500, 2]);
    expect([config.opensea.timeoutMs, config.opensea.retry.maxRetries]).toEqual([1_000, 0]);
    expect([config.mailjet.timeoutMs, config.mailjet.retry.maxRetries]).toEqual([1_000, 2]);
    expect([config.indexRpc.timeoutMs, config.indexRpc.retry.maxRetries]).toEqual([900, 9]);
    expect([config.service.timeoutMs, config.service.retry.maxRetries]).toEqual([3_000, 2]);
    // The backoff settings are shared by every upstream.
    for (const retry of [config.nftport, config.opensea, config.mailjet, config.service, config.indexRpc].map(
      (u) => u.retry,
    ))
      expect(retry.baseDelayMs).toBe(7);
  });

  it("checks a shared value even where an upstream's own stands in for it", () => {
    expect(() =>
      loadConfig({
        CHAINMAIL_TIMEOUT_MS: "soon",
        NFTPORT_TIMEOUT_MS: "1",
        OPENSEA_TIMEOUT_MS: "1",
        MAILJET_TIMEOUT_MS: "1",
        INDEX_RPC_TIMEOUT_MS: "1",
        CHAINMAIL_SERVICE_TIMEOUT_MS: "1",
      }),
    ).toThrow(/CHAINMAIL_TIMEOUT_MS/);
  });

  it("drops trailing slashes of base URLs, reads the feed in lower case and INDEX_DB before INDEX_DATABASE_URL", () => {
    const config = loadConfig({
      NFTPORT_BASE_URL: "http://127.0.0.1:1234///",
      OPENSEA_BASE_URL: "http://127.0.0.1:5678/api/",
      MAILJET_BASE_URL: "http://127.0.0.1:9",
      CHAINMAIL_SERVICE_URL: "http://127.0.0.1:8080/",
      ETH_USD_FEED: "0x5F4eC3Df9cbd43714FE2740f5E3616155c5b8419",
      INDEX_DATABASE_URL: "postgres://u@db/index",
      INDEX_DB: "/tmp/index.sqlite",
    });
    expect(config.nftport.baseUrl).toBe("http://127.0.0.1:1234");
    expect(config.opensea.baseUrl).toBe("http://127.0.0.1:5678/api");
    expect(config.mailjet.baseUrl).toBe("http://127.0.0.1:9");
    expect(config.service.baseUrl).toBe("http://127.0.0.1:8080");
    expect(config.opensea.ethUsdFeed).toBe("0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419");
    expect(config.indexDb).toBe("/tmp/index.sqlite");
    expect(loadConfig({ INDEX_DATABASE_URL: "postgres://u@db/index" }).indexDb).toBe("postgres://u@db/index");
  });

  it("keeps the record it was read from, and takes the pools of its proxy setting", () => {
    const env = { NFTPORT_API_KEY: "k", CHAINMAIL_SERVICE_TOKEN: "t" };
    const config = loadConfig(env);
    expect(config.env).toBe(env);
    expect([config.nftport.apiKey, config.service.token]).toEqual(["k", "t"]);
    const pools = poolsFor(env);
    expect(config.pool).toBe(pools.pool);
    expect(config.nftport.pool).toBe(pools.paging);
    expect(config.opensea.pool).toBe(pools.paging);
    // Another record with the same proxy setting shares them.
    expect(loadConfig({ OPENSEA_API_KEY: "other" }).pool).toBe(config.pool);
  });
});

describe("configFrom", () => {
  it("puts the given pools where the upstreams read them, and reads nothing of process.env", () => {
    const pool = marker();
    const paging = marker();
    const saved = process.env.NFTPORT_BASE_URL;
    process.env.NFTPORT_BASE_URL = "http://127.0.0.1:1/from-process";
    try {
      const config = configFrom({ OPENSEA_API_KEY: "os" }, { pool, paging });
      expect(config.pool).toBe(pool);
      expect(config.nftport.pool).toBe(paging);
      expect(config.opensea.pool).toBe(paging);
      expect(config.opensea.apiKey).toBe("os");
      expect(config.nftport.baseUrl).toBe("https://api.nftport.xyz");
      // A host that has one engine for everything leaves `paging` out: the paged reads then take `pool`.
      const single = configFrom({}, { pool });
      expect(single.nftport.pool).toBeUndefined();
      expect(single.opensea.pool).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.NFTPORT_BASE_URL;
      else process.env.NFTPORT_BASE_URL = saved;
    }
  });
});

describe("defaultConfig", () => {
  it("is this process's environment, read once", () => {
    const first = defaultConfig();
    expect(first.env).toBe(process.env);
    expect(defaultConfig()).toBe(first);
  });
});
