/**
 * Hostile input through the library, against the local upstreams (which count every request they get): values
 * that cannot go into a header, keys named like built-in properties, inherited properties, nesting without bound,
 * values JSON cannot hold, and integers too large for their field. Each is `invalid_input` naming the field, and
 * nothing is sent.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { httpRequest, retryReads } from "../../src/core/http.js";
import { JsonTooDeepError, MAX_JSON_DEPTH, parseJson } from "../../src/core/json.js";
import { type AnyNode, runNode } from "../../src/core/node.js";
import { records } from "../../src/core/paginate.js";
import { dispatcherPool } from "../../src/core/pools/dispatcher.js";
import { emailSend, nftTransactionsByToken, nftTransactionsOnChain } from "../../src/nodes/index.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { testConfig } from "../support/helpers.js";
import { API_KEY, type MailjetServer, SECRET_KEY, startMailjet } from "../upstreams/mailjet.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_721, standardDataset } from "../upstreams/nftport-data.js";

let nftport: NftportServer;
let mailjet: MailjetServer;
let config: ReturnType<typeof testConfig>;

const query = { contract_address: CONTRACT_721, token_id: "1" };
const params = { api_key: VALID_KEY };
const mailParams = { "user id": API_KEY, password: SECRET_KEY };
const mail = (extra: Record<string, unknown> = {}) => ({
  From: { Email: "news@chainmail.test" },
  To: [{ Email: "ada@example.org" }],
  TextPart: "Hello",
  ...extra,
});

beforeAll(async () => {
  [nftport, mailjet] = await Promise.all([startNftport(standardDataset(20)), startMailjet()]);
  // No retries and a short timeout: a wedged pool shows as upstream_timeout, not as a long wait.
  config = testConfig({
    NFTPORT_BASE_URL: nftport.url,
    MAILJET_BASE_URL: mailjet.url,
    CHAINMAIL_MAX_RETRIES: "0",
    CHAINMAIL_TIMEOUT_MS: "2000",
  });
});
afterAll(() => Promise.all([nftport.close(), mailjet.close()]));
beforeEach(() => {
  nftport.requests.length = 0;
  mailjet.requests.length = 0;
});

/** Runs a node and expects `invalid_input` with a violation on each field, and nothing sent upstream. */
async function refused(node: AnyNode, input: unknown, fields: string[], cfg = config) {
  const out = await runNode(node, input, { config: cfg });
  expect(out.error?.details.code).toBe("invalid_input");
  const named = (out.error!.details.violations as { field: string }[]).map((v) => v.field);
  for (const field of fields) expect(named).toContain(field);
  expect(nftport.requests).toHaveLength(0);
  expect(mailjet.requests).toHaveLength(0);
  return out.error!;
}

describe("values that go into a header or a URL", () => {
  const badKeys = ["a\r\nX-Injected: 1", "key\n", "\u0000key", "k€y", " leading-space", "x".repeat(1025)];

  it.each(badKeys)("api_key %j is invalid_input naming params.api_key, never echoed, nothing sent", async (key) => {
    const error = await refused(nftTransactionsByToken, { query, params: { api_key: key } }, ["params.api_key"]);
    expect(JSON.stringify(error)).not.toContain(JSON.stringify(key).slice(1, -1));
    expect(error.details.request_sent).toBeUndefined();
  });

  it("the operator's NFTPORT_API_KEY with a line break is refused the same way", async () => {
    const operator = testConfig({ NFTPORT_BASE_URL: nftport.url, NFTPORT_API_KEY: "good-looking\r\nkey" });
    await refused(nftTransactionsByToken, { query }, ["params.api_key"], operator);
  });

  it("200 refused keys leave the shared upstream pool usable: the next valid call is answered", async () => {
    const codes = new Set<unknown>();
    for (let i = 0; i < 200; i++) {
      const out = await runNode(nftTransactionsByToken, { query, params: { api_key: `k${i}\n` } }, { config });
      codes.add(out.error?.details.code);
    }
    // Asked first: on a wedged pool this call waits out its timeout instead of being answered.
    const out = await runNode(nftTransactionsByToken, { query, params }, { config });
    expect(out.error).toBeUndefined();
    expect(out.data?.response).toBe("OK");
    expect(nftport.requests).toHaveLength(1);
    expect([...codes]).toEqual(["invalid_input"]);
  });

  it.each([
    ['params["user id"]', { "user id": "key\r\n", password: SECRET_KEY }],
    ["params.password", { "user id": API_KEY, password: "sec\nret" }],
    ["params.password", { "user id": API_KEY, password: "\u0000" }],
  ])("Mailjet credentials with control characters: %s is invalid_input, never echoed", async (field, login) => {
    const error = await refused(emailSend, { params: login, request: { Messages: [mail()] } }, [field]);
    expect(JSON.stringify(error)).not.toContain(API_KEY);
    expect(JSON.stringify(error)).not.toContain(SECRET_KEY);
  });

  it("the HTTP client refuses a header HTTP cannot carry before the pool sees it: two-slot pool, 100 refusals, then an answer", async () => {
    // Two connections: undici gives a one-connection Agent a bare Client, not a pool.
    const dispatcher = new Agent({ connections: 2 });
    const attempts: unknown[] = [];
    const call = (authorization: string) =>
      httpRequest({
        upstream: "NFTPort",
        method: "GET",
        url: `${nftport.url}/v0/transactions/nfts/${CONTRACT_721}/1`,
        headers: { authorization },
        timeoutMs: 2000,
        retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1000 },
        shouldRetry: retryReads,
        secrets: [authorization],
        pool: dispatcherPool(dispatcher),
        onAttempt: (event) => attempts.push(event),
      });
    const refusals = [];
    for (let i = 0; i < 100; i++) refusals.push(await call(`secret-${i}\r\nX-Injected: yes`));
    const good = await call(VALID_KEY);
    expect(good.response?.status).toBe(200);
    expect(nftport.requests).toHaveLength(1);
    refusals.forEach((result, i) => {
      expect(result.attempts).toBe(0);
      expect(result.error?.code).toBe("invalid_input");
      expect(result.error?.message).toContain("authorization header");
      expect(result.error?.message).not.toContain(`secret-${i}`);
      expect(result.error?.details.request_sent).toBeUndefined();
    });
    expect(attempts).toHaveLength(1);
    await dispatcher.close();
  });
});

describe("keys named like built-in properties, and inherited properties", () => {
  it.each(["constructor", "toString", "valueOf", "hasOwnProperty", "__proto__"])(
    "a top-level %s is an unknown port, and the upstream is not called",
    async (name) => {
      // JSON.parse makes `__proto__` an own key, as a request body does.
      const input = parseJson(`{"query":${JSON.stringify(query)},"params":${JSON.stringify(params)},"${name}":1}`);
      const error = await refused(nftTransactionsByToken, input, [name]);
      expect(error.error).toContain(`${name} is not an input port`);
    },
  );

  it("an own __proto__ key inside a port is an unknown field, not a prototype", async () => {
    const input = parseJson(
      `{"query":{"__proto__":{"contract_address":"${CONTRACT_721}","token_id":"1"}},"params":${JSON.stringify(params)}}`,
    );
    await refused(nftTransactionsByToken, input, ["query.contract_address", "query.token_id", "query.__proto__"]);
  });

  it("inherited properties never satisfy required fields, at the top level or inside a port", async () => {
    // An input that is not a plain object is refused whole; its inherited ports are never read.
    await refused(nftTransactionsByToken, Object.create({ query, params }), ["(input)"]);
    const inheriting = await refused(
      nftTransactionsByToken,
      { query: Object.create(query), params: Object.create(params) },
      ["query", "params"],
    );
    expect(inheriting.error).toContain("query inherits from another object");
    // An object with its own fields and inherited others: the inherited ones are not taken for given.
    const partly = Object.assign(Object.create({ token_id: "1" }), { contract_address: CONTRACT_721 });
    await refused(nftTransactionsByToken, { query: partly, params }, ["query"]);
    await refused(emailSend, { params: mailParams, request: Object.create({ Messages: [mail()] }) }, ["request"]);
  });

  it("paging reads own properties only: an inherited query is not the caller's", async () => {
    const pagesOf = (input: Record<string, unknown>) =>
      records(nftTransactionsByToken, input, { limit: 5 }, { config });
    const inheriting = Object.assign(Object.create({ query }), { params });
    await expect(pagesOf(inheriting).next()).rejects.toMatchObject({ code: "invalid_input" });
    expect(nftport.requests).toHaveLength(0);
  });

  it("a message's own __proto__ key does not become the prototype of the message sent (outbox renders Globals)", async () => {
    const outbox = testConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: "/nonexistent/never-written" });
    const request = parseJson(
      `{"Globals":{"Subject":"Plain"},"Messages":[{"From":{"Email":"news@chainmail.test"},"To":[{"Email":"a@example.org"}],"TextPart":"Hi","__proto__":{"Subject":"Injected","SandboxMode":true}}],"SandboxMode":true}`,
    );
    const out = await runNode(emailSend, { request }, { config: outbox });
    // The key is the message's own: the renderer refuses it as a field it cannot honour, nothing else.
    const result = out["messages sent"]?.Messages[0];
    expect(result?.Status).toBe("error");
    expect(result?.Errors?.[0]?.ErrorCode).toBe("unsupported-__proto__");
  });
});

describe("nesting depth and values JSON cannot hold", () => {
  const nested = (depth: number, leaf = "0") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;

  it(`the parser takes ${MAX_JSON_DEPTH} levels and refuses one more, whichever parse path`, () => {
    expect(() => parseJson(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJson(nested(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeepError);
    expect(() => parseJson(nested(MAX_JSON_DEPTH + 1, "12345678901234567890"))).toThrow(JsonTooDeepError);
    expect(() => parseJson(nested(10_000))).toThrow(JsonTooDeepError);
    expect(() => parseJson(`{"a":${nested(5000).replace(/\[/g, '{"b":[').replace(/\]/g, "]}")}}`)).toThrow(
      JsonTooDeepError,
    );
  });

  it("brackets inside strings, escaped quotes included, do not count", () => {
    const text = `{"a":"${"[".repeat(500)}","b":"\\"${"{".repeat(500)}\\\\","c":[${nested(50)}]}`;
    expect(parseJson(text)).toMatchObject({ a: "[".repeat(500), b: `"${"{".repeat(500)}\\` });
  });

  it("a deeply nested email Variables or retriever field is invalid_input naming it, not an internal error", async () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 10_000; i++) deep = { v: deep };
    const email = await refused(
      emailSend,
      { params: mailParams, request: { Messages: [mail({ Variables: deep })] } },
      [],
    );
    expect(email.error).toContain(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    const field = (email.details.violations as { field: string }[])[0]!.field;
    expect(field.startsWith("request.Messages[0].Variables.v.v")).toBe(true);
    const retriever = await refused(nftTransactionsByToken, { query: { ...query, continuation: deep }, params }, []);
    expect(retriever.error).toContain("query.continuation.v");
  });

  it("circular values, functions, symbols, class instances, non-finite numbers and lone surrogates are invalid_input", async () => {
    const circular: Record<string, unknown> = { ...query };
    circular.self = circular;
    const cases: [unknown, string, string][] = [
      [{ query: circular, params }, "query.self", "refers back to a value that contains it"],
      [{ query, params: { api_key: () => VALID_KEY } }, "params.api_key", "is a function"],
      [{ query: { ...query, token_id: Symbol("1") }, params }, "query.token_id", "is a symbol"],
      [{ query: { ...query, continuation: new Date() }, params }, "query.continuation", "is a Date"],
      [{ query: { ...query, page_size: Number.NaN }, params }, "query.page_size", "must be a finite number"],
      [{ query: { ...query, type: [undefined] }, params }, "query.type[0]", "is undefined"],
      [{ query: { ...query, continuation: "a\ud800b" }, params }, "query.continuation", "holds a lone surrogate"],
    ];
    for (const [input, field, says] of cases) {
      const error = await refused(nftTransactionsByToken, input, [field]);
      expect(error.error).toContain(says);
    }
  });

  it("a getter or proxy that throws is invalid_input, not internal", async () => {
    const trap: Record<string, unknown> = { contract_address: CONTRACT_721 };
    Object.defineProperty(trap, "token_id", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    const getter = await runNode(nftTransactionsByToken, { query: trap, params }, { config });
    expect(getter.error?.details.code).toBe("invalid_input");
    expect(getter.error?.error).toContain("query.token_id could not be read: boom");
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const revoked = await runNode(nftTransactionsByToken, { query: proxy, params }, { config });
    expect(revoked.error?.details.code).toBe("invalid_input");
    const whole = await runNode(nftTransactionsByToken, proxy, { config });
    expect(whole.error?.details.code).toBe("invalid_input");
    expect(nftport.requests).toHaveLength(0);
  });

  it("null-prototype objects are plain data: accepted where an object belongs, refused where a string does", async () => {
    const bare = Object.assign(Object.create(null), query);
    const ok = await runNode(nftTransactionsByToken, { query: bare, params }, { config });
    expect(ok.data?.response).toBe("OK");
    nftport.requests.length = 0;
    await refused(nftTransactionsByToken, { query: { ...query, token_id: Object.create(null) }, params }, [
      "query.token_id",
    ]);
    await refused(
      emailSend,
      { params: mailParams, request: { Messages: [mail({ To: [{ Email: Object.create(null) }] })] } },
      ["request.Messages[0].To[0].Email"],
    );
  });

  it("the caller's input is read, never changed (defaults go into a copy)", async () => {
    const input = { query: { ...query }, params: { ...params } };
    const before = JSON.stringify(input);
    await runNode(nftTransactionsByToken, input, { config });
    expect(JSON.stringify(input)).toBe(before);
  });
});

describe("integer bounds and exact digits in URLs", () => {
  it.each([
    [1e21, "query.page_size"],
    [1e308, "query.page_size"],
    [1001, "query.page_size"],
    [10n ** 20n, "query.page_size"],
  ])("page_size %s is invalid_input", async (pageSize, field) => {
    const error = await refused(nftTransactionsByToken, { query: { ...query, page_size: pageSize }, params }, [field]);
    expect(error.error).toContain("<= 1000");
  });

  it.each([1e21, 2n ** 64n, -1, 1.5])("a block number of %s is invalid_input (uint64)", async (block) => {
    const error = await refused(nftTransactionsOnChain, { query: { from_block: block }, params }, ["query.from_block"]);
    expect(error.error).toContain("an integer from 0 to 18446744073709551615 (uint64)");
  });

  it("block numbers up to 2^64-1 reach the URL as exact decimal digits, never in exponent form", async () => {
    const from = 2 ** 60; // an exact double beyond 2^53
    const to = 2n ** 64n - 1n;
    const out = await runNode(
      nftTransactionsOnChain,
      { query: { from_block: from, to_block: to }, params },
      { config },
    );
    expect(out.data?.transactions).toEqual([]);
    const sent = nftport.requests.at(-1)!;
    expect(sent.query.get("from_block")).toBe("1152921504606846976");
    expect(sent.query.get("to_block")).toBe("18446744073709551615");
    expect(sent.query.toString()).not.toMatch(/e%2B|e\+/i);
  });

  it("the own index takes block bounds beyond 2^53 (none exists there): an empty page, not an error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chainmail-uint64-"));
    try {
      const db = join(dir, "index.sqlite");
      await (await IndexStore.open(db)).close(); // an index built, with nothing in it
      const index = testConfig({ NFT_SOURCE: "index", INDEX_DB: db });
      const input = { query: { from_block: 2n ** 60n, to_block: 2n ** 64n - 1n }, params: {} };
      const out = await runNode(nftTransactionsOnChain, input, { config: index });
      expect(out.error).toBeUndefined();
      expect(out.data).toEqual({ response: "OK", transactions: [], continuation: "" });
    } finally {
      closeIndexSources();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("from_block > to_block compares bigints and numbers exactly", async () => {
    await refused(nftTransactionsOnChain, { query: { from_block: 2n ** 63n, to_block: 2 ** 62 }, params }, [
      "query.from_block",
    ]);
  });

  it("a type list longer than its distinct kinds, and a continuation longer than any issued, are invalid_input", async () => {
    await refused(nftTransactionsByToken, { query: { ...query, type: Array(6).fill("sale") }, params }, ["query.type"]);
    const twice = await runNode(
      nftTransactionsByToken,
      { query: { ...query, type: ["sale", "sale"] }, params },
      { config },
    );
    expect(twice.error?.error).toContain(
      'query.type = ["sale","sale"] is invalid: must be each item at most once ("sale" is given more than once)',
    );
    await refused(nftTransactionsByToken, { query: { ...query, continuation: "c".repeat(1025) }, params }, [
      "query.continuation",
    ]);
  });
});
