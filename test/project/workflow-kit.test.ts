/**
 * What the workflow packages take from chainmail (src/workflow): outputs with exact decimal strings for hosts that
 * cannot carry a bigint, the catalog turned into the settings the core reads, a config built around a host's own
 * HTTP engine (its exchanges and waits are the only ones made), and the type filters read from the schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson } from "../../src/core/json.js";
import {
  type Answer,
  type Exchange,
  hostConfig,
  mailTransports,
  nftSources,
  nftTransactionsByContract,
  nftTransactionsOnChain,
  portableNftSources,
  runNodeWith,
  settingsEnv,
  toErrorPayload,
  typeFilterValues,
  type UpstreamPool,
  withExactStrings,
} from "../../src/workflow/index.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_1155, HUGE_TOKEN, standardDataset } from "../upstreams/nftport-data.js";

let nftport: NftportServer;
beforeAll(async () => {
  nftport = await startNftport(standardDataset());
});
afterAll(() => nftport.close());

describe("withExactStrings", () => {
  it("writes every bigint as its decimal digits, at any depth, and leaves everything else as it was", () => {
    const value = parseJson(
      '{"a":[1,123456789012345678901234567890,{"b":-9007199254740993}],"c":"x","d":null,"e":1.5}',
    );
    expect(withExactStrings(value)).toEqual({
      a: [1, "123456789012345678901234567890", { b: "-9007199254740993" }],
      c: "x",
      d: null,
      e: 1.5,
    });
    // Copied, not changed in place.
    expect(typeof (value as { a: unknown[] }).a[1]).toBe("bigint");
  });

  it("keeps a `__proto__` key as data, never as the prototype", () => {
    const out = withExactStrings(JSON.parse('{"__proto__":{"polluted":1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("the catalog", () => {
  it("offers the sources that run without a database, each setting named by the variable the core reads", () => {
    expect(portableNftSources().map((s) => s.id)).toEqual(["nftport", "service", "opensea"]);
    expect(nftSources.find((s) => s.id === "index")?.portable).toBe(false);
    for (const source of nftSources) for (const setting of source.settings) expect(setting.env).toMatch(/^[A-Z_]+$/);
  });

  it("turns what a user entered into settings: NFT_SOURCE, values trimmed, defaults for what was left empty", () => {
    const nftportEntry = nftSources.find((s) => s.id === "nftport")!;
    expect(settingsEnv(nftportEntry, { apiKey: " k ", baseUrl: "" })).toEqual({
      NFT_SOURCE: "nftport",
      NFTPORT_API_KEY: "k",
      NFTPORT_BASE_URL: "https://api.nftport.xyz",
    });
    expect(settingsEnv(nftportEntry, { apiKey: "k" }, "NFT_SOURCE", { defaults: false })).toEqual({
      NFT_SOURCE: "nftport",
      NFTPORT_API_KEY: "k",
    });
    const mailjet = mailTransports.find((t) => t.id === "mailjet")!;
    expect(settingsEnv(mailjet, { apiKey: "a", secretKey: "b" }, "EMAIL_TRANSPORT")).toMatchObject({
      EMAIL_TRANSPORT: "mailjet",
      MAILJET_API_KEY: "a",
      MAILJET_SECRET_KEY: "b",
    });
    // Only own keys count: an inherited `apiKey` is not a value the user gave.
    const inherited = Object.create({ apiKey: "inherited" }) as Record<string, unknown>;
    expect(settingsEnv(nftportEntry, inherited).NFTPORT_API_KEY).toBeUndefined();
  });

  it("reads each retriever's type filter from its schema", () => {
    expect(typeFilterValues(nftTransactionsByContract)).toEqual([
      "transfer",
      "mint",
      "burn",
      "bid",
      "list",
      "sale",
      "all",
    ]);
    expect(typeFilterValues(nftTransactionsOnChain)).toEqual(["transfer", "mint", "burn", "sale", "all"]);
  });
});

describe("a host's config", () => {
  /** A host's engine: fetch for the exchange, its own record of every call and every wait. */
  function recordingPool() {
    const calls: Exchange[] = [];
    const waits: number[] = [];
    const pool: UpstreamPool = {
      async exchange(request): Promise<Answer> {
        calls.push(request);
        const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
        return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
      },
      async wait(ms) {
        waits.push(ms);
      },
    };
    return { pool, calls, waits };
  }

  it("runs a node through the host's engine alone, with the settings it gathered", async () => {
    const { pool, calls, waits } = recordingPool();
    const config = hostConfig(
      { NFT_SOURCE: "nftport", NFTPORT_BASE_URL: nftport.url, NFTPORT_API_KEY: VALID_KEY },
      pool,
    );
    nftport.fault({ status: 503, body: "" });
    const out = await runNodeWith(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_1155, page_size: 2 } },
      { config },
    );
    expect(out.data?.transactions).toHaveLength(2);
    // The 503, a wait through the host, then the page.
    expect(calls.map((c) => c.url.startsWith(`${nftport.url}/v0/transactions/`))).toEqual([true, true]);
    expect(calls[0]!.headers?.authorization).toBe(VALID_KEY);
    expect(waits).toHaveLength(1);
    // Nothing a host cannot serialise.
    expect(() => JSON.stringify(withExactStrings(out))).not.toThrow();
  });

  it("a source that needs the own index is refused, naming NFT_SOURCE and the way through a chainmail service", () => {
    const { pool } = recordingPool();
    for (const source of ["index", "index+opensea"]) {
      let thrown: unknown;
      try {
        hostConfig({ NFT_SOURCE: source, INDEX_DB: "/tmp/never-opened.sqlite" }, pool);
      } catch (error) {
        thrown = error;
      }
      const payload = toErrorPayload(thrown);
      expect(payload.details.code).toBe("invalid_input");
      expect(payload.details.setting).toBe("NFT_SOURCE");
      expect(payload.error).toContain(`NFT_SOURCE=${source} chainmail serve`);
      expect(payload.error).toContain("chainmail service");
    }
    for (const source of portableNftSources())
      expect(hostConfig({ NFT_SOURCE: source.id }, pool).nftSource).toBe(source.id);
  });

  it("mail always goes through Mailjet, whatever the settings say", () => {
    const { pool } = recordingPool();
    expect(hostConfig({ EMAIL_TRANSPORT: "smtp" }, pool).emailTransport).toBe("mailjet");
  });

  it("a token beyond 2^53 stays exact from the upstream to the host's output", async () => {
    const { pool } = recordingPool();
    const config = hostConfig({ NFTPORT_BASE_URL: nftport.url, NFTPORT_API_KEY: VALID_KEY }, pool);
    const out = await runNodeWith(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_1155, type: ["mint"], page_size: 10 } },
      { config },
    );
    const text = JSON.stringify(withExactStrings(out.data));
    expect(text).toContain(HUGE_TOKEN);
    expect(text).toContain('"quantity":"10000000000000000000000"');
  });
});
