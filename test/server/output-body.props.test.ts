/**
 * The service writes a retriever's page as the upstream's own text when that text is the whole page (reply.ts,
 * core/raw-json.ts). Property: for generated NFTPort answers (records of any JSON, integers beyond 2^53, strings
 * full of escapes, spacing, key order, pages with a key more or less), the reply `stringifyOutput` writes for the
 * node's output parses to exactly what `stringifyJson` of that output parses to; and when the answer is not the
 * whole page, the reply is `stringifyJson`'s, byte for byte. Each case goes through a real loopback upstream.
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 100).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson, stringifyJson } from "../../src/core/json.js";
import { runNode } from "../../src/core/node.js";
import { rawJsonOf, vouchRawJson } from "../../src/core/raw-json.js";
import { nftTransactionsByToken } from "../../src/nodes/nft-transactions-by-token.js";
import { stringifyOutput } from "../../src/server/output-body.js";
import { testConfig } from "../support/helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 100);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);
const KEY = "3f2b8c1e-6a4d-4e8f-9b7a-1c2d3e4f5a6b";

/** A loopback NFTPort whose next answer is whatever the test sets. */
let answer = "";
let server: Server;
let baseUrl = "";
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A value as text independent of key order, telling bigint from number. */
const canonical = (value: unknown): string => {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  return `{${Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
    .join(",")}}`;
};

const bigLiteral = fc
  .tuple(fc.constantFrom(2n ** 53n, 10n ** 20n, 2n ** 64n), fc.bigInt({ min: -2n, max: 2n }))
  .map(([base, offset]) => String(base + offset));
const escapes = fc.constantFrom('"', "\\", "\n", "\u2028", "é", "😀", "\\u0000", "</script>", '{"a":1}');
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.array(escapes, { maxLength: 4 }).map((s) => s.join("")),
);
/** A value written as JSON text: any JSON, plus literals a double cannot hold. */
const valueText: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  bigLiteral,
  text.map((s) => JSON.stringify(s)),
  fc.constantFrom("1.50", "1e2", "-0", "0.1"),
);
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("type", "quantity", "__proto__", "0"));
const space = fc.constantFrom("", " ", "\n  ");
const record = fc
  .tuple(fc.uniqueArray(fc.tuple(key, valueText), { maxLength: 6, selector: ([k]) => k }), space)
  .map(([entries, sp]) => `{${sp}${entries.map(([k, v]) => `${JSON.stringify(k)}:${sp}${v}`).join(`,${sp}`)}${sp}}`);

/** An NFTPort answer: the page's keys in any order, sometimes one more, one missing or a continuation not a string. */
const page = fc
  .tuple(
    fc.array(record, { maxLength: 6 }),
    fc.oneof(
      text.map((s) => JSON.stringify(s)),
      fc.constantFrom("null", "12", ""),
    ),
    fc.constantFrom<"whole" | "extra">("whole", "whole", "extra"),
    fc.boolean(),
    space,
  )
  .map(([records, continuation, shape, reversed, sp]) => {
    const entries = [`"response":${sp}"OK"`, `"transactions":${sp}[${sp}${records.join(`,${sp}`)}${sp}]`];
    if (continuation !== "") entries.push(`"continuation":${sp}${continuation}`);
    if (shape === "extra") entries.push(`"total":${sp}${records.length}`);
    if (reversed) entries.reverse();
    const whole = shape === "whole" && continuation !== "" && continuation.startsWith('"');
    return { body: `{${sp}${entries.join(`,${sp}`)}${sp}}`, whole };
  });

describe("the service's reply of a retriever page (property)", () => {
  it("means exactly what serialising the output means, and is that serialisation unless the answer is the whole page", async () => {
    await fc.assert(
      fc.asyncProperty(page, async ({ body, whole }) => {
        answer = body;
        const output = await runNode(
          nftTransactionsByToken,
          { query: { contract_address: `0x${"ab".repeat(20)}`, token_id: "1" }, params: { api_key: KEY } },
          { config: testConfig({ NFTPORT_BASE_URL: baseUrl, NFTPORT_MAX_RETRIES: "0" }) },
        );
        expect(output.data).toBeDefined();
        expect(rawJsonOf(output.data!) !== undefined).toBe(whole);
        const written = stringifyOutput(output);
        const serialised = stringifyJson(output);
        if (!whole) expect(written).toBe(serialised);
        expect(canonical(parseJson(written))).toBe(canonical(parseJson(serialised)));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("writes the upstream's text for a whole page, and serialises every other port as before", () => {
    const data = { response: "OK", transactions: [{ quantity: 9007199254740993n }], continuation: "" };
    const raw = '{"continuation": "", "response": "OK", "transactions": [{"quantity": 9007199254740993}]}';
    vouchRawJson(data, raw);
    const output = { data, response: { status: 200, headers: {}, body: raw }, extra: undefined };
    expect(stringifyOutput(output)).toBe(
      `{"data":${raw},"response":{"status":200,"headers":{},"body":${JSON.stringify(raw)}}}`,
    );
    expect(stringifyOutput({ error: { error: "x", details: { code: "internal" } } })).toBe(
      stringifyJson({ error: { error: "x", details: { code: "internal" } } }),
    );
  });
});
