/**
 * Property-based tests of what reads OpenSea's answers and the OpenSea source's continuations. OpenSea's answers
 * are untrusted input like any other:
 * - any JSON value as an events answer, and real events with any of their fields replaced by any JSON value, read
 *   without throwing: each event gives no record, a record whose every field keeps its rule (lower-case addresses,
 *   canonical decimal token ids, integer quantities >= 0, UTC dates, finite prices), or the field it broke;
 * - the same bodies served over HTTP to the node give `data` or `upstream_bad_response` (or OpenSea's refusal of
 *   a made-up cursor), never `internal`;
 * - a price is the nearest number to quantity ÷ 10^decimals, for any quantity (up to 78 digits) and decimals;
 * - a continuation decodes only for the query it was issued for, and any string decodes without throwing.
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300; the HTTP property a tenth of that).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringifyJson } from "../../../src/core/json.js";
import { runNode } from "../../../src/core/node.js";
import { nftTransactionsByToken } from "../../../src/nodes/index.js";
import { decodeContinuation, encodeContinuation } from "../../../src/sources/opensea/continuation.js";
import { kindOf, readEventsPage, toRecord, Unreadable } from "../../../src/sources/opensea/events.js";
import { forgetCollections } from "../../../src/sources/opensea/source.js";
import { testConfig } from "../../support/helpers.js";
import { OPENSEA_KEY, type OpenSeaServer, startOpenSea } from "../../upstreams/opensea.js";
import { baycEvents, GLYPHBOTS, glyphbotsEvents, openseaDataset } from "../../upstreams/opensea-data.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);
const settings = { numRuns: RUNS, seed: SEED };

const real = [...baycEvents(), ...glyphbotsEvents()];
const json = fc.jsonValue({ maxDepth: 3 });
/** Values that stress a reader: near-misses of the real ones, big and odd numbers, odd strings. */
const tricky = fc.oneof(
  json,
  fc.constantFrom("", "0x", `0x${"f".repeat(40)}`, `0x${"G".repeat(40)}`, "1e3", "-1", "007", "9".repeat(79)),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
  fc.constantFrom(2 ** 53, -0, 1.5, Number.MAX_VALUE, 253_402_300_800),
  fc.constant({ __proto__: { contract: "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d" } }),
);
/** A real event with some of its fields (or its nested NFT's or payment's) replaced. */
const mutated = fc
  .record({
    index: fc.nat(real.length - 1),
    top: fc.dictionary(fc.constantFrom(...new Set(real.flatMap((e) => Object.keys(e)))), tricky, { maxKeys: 3 }),
    nested: fc.dictionary(
      fc.constantFrom("contract", "identifier", "token_standard", "quantity", "decimals", "token_address"),
      tricky,
      { maxKeys: 2 },
    ),
  })
  .map(({ index, top, nested }) => {
    const event: Record<string, any> = { ...real[index]!, ...top };
    for (const key of ["nft", "asset", "payment"]) {
      if (event[key] && typeof event[key] === "object" && !Array.isArray(event[key]))
        event[key] = { ...event[key], ...nested };
    }
    return event;
  });
const answer = fc.oneof(
  json,
  fc.record({
    asset_events: fc.array(fc.oneof(mutated, json), { maxLength: 6 }),
    next: fc.oneof(fc.constant(null), fc.string(), json),
  }),
);

const ADDRESS = /^0x[0-9a-f]{40}$/;
const TOKEN = /^(0|[1-9]\d{0,77})$/;
const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

function checkRecord(record: Record<string, any>): void {
  expect(record.transaction_date).toMatch(DATE);
  const quantity = record.quantity;
  expect(typeof quantity === "bigint" ? quantity >= 0n : Number.isSafeInteger(quantity) && quantity >= 0).toBe(true);
  for (const field of [
    "lister_address",
    "bidder_address",
    "seller_address",
    "buyer_address",
    "owner_address",
    "transfer_from",
    "transfer_to",
    "contract_address",
  ]) {
    if (record[field] !== undefined) expect(record[field]).toMatch(ADDRESS);
  }
  const nft = record.nft ?? record;
  expect(nft.contract_address).toMatch(ADDRESS);
  expect(nft.token_id).toMatch(TOKEN);
  if (record.transaction_hash !== undefined) expect(record.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/);
  if (record.price_details) {
    expect(Number.isFinite(record.price_details.price)).toBe(true);
    expect(record.price_details.price).toBeGreaterThanOrEqual(0);
  }
}

describe("reading OpenSea's answers", () => {
  it("any answer: no throw; each event gives nothing, a record that keeps every rule, or the field it broke", () => {
    fc.assert(
      fc.property(answer, (body) => {
        const page = readEventsPage(body);
        if (page instanceof Unreadable) return;
        page.events.forEach((event, i) => {
          const kind = kindOf(event);
          if (!kind) return;
          const read = toRecord(event as Record<string, unknown>, kind, `asset_events[${i}]`);
          if (read instanceof Unreadable) expect(read.field.startsWith(`asset_events[${i}].`)).toBe(true);
          else if (read) checkRecord(read.record as Record<string, any>);
        });
      }),
      settings,
    );
  });

  it("a price is the number nearest to quantity ÷ 10^decimals, for any quantity and decimals", () => {
    const sale = real.find((e) => e.event_type === "sale")!;
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 78n - 1n }), fc.nat(77), (quantity, decimals) => {
        const event = { ...sale, payment: { ...(sale.payment as object), quantity: quantity.toString(), decimals } };
        const read = toRecord(event, "sale", "e");
        if (read instanceof Unreadable || !read) throw new Error("a valid payment was refused");
        // Number() of decimal text rounds correctly: the oracle, written the other way round.
        expect((read.record as any).price_details.price).toBe(Number(`${quantity}e-${decimals}`));
      }),
      settings,
    );
  });

  it("a continuation decodes only for its own query; any string decodes without throwing", () => {
    const cursor = fc.stringMatching(/^[\x21-\x7e]{1,256}$/);
    fc.assert(
      fc.property(cursor, fc.string(), fc.string(), fc.string({ maxLength: 1100 }), (next, a, b, junk) => {
        const token = encodeContinuation({ next, previous: "AAAAAAAA" }, a);
        expect(token.length).toBeLessThanOrEqual(1024);
        expect(decodeContinuation(token, a)).toEqual({ next, previous: "AAAAAAAA" });
        if (a !== b) expect(decodeContinuation(token, b)).toBeUndefined();
        expect(() => decodeContinuation(junk, a)).not.toThrow();
      }),
      settings,
    );
  });
});

describe("hostile answers over HTTP", () => {
  let upstream: OpenSeaServer;
  beforeAll(async () => {
    upstream = await startOpenSea(openseaDataset());
  });
  afterAll(() => upstream.close());

  it("the node answers data or upstream_bad_response, never internal, and never throws", async () => {
    const config = testConfig({
      NFT_SOURCE: "opensea",
      OPENSEA_BASE_URL: upstream.url,
      OPENSEA_API_KEY: OPENSEA_KEY,
      OPENSEA_MAX_RETRIES: "0",
    });
    await fc.assert(
      fc.asyncProperty(answer, async (body) => {
        forgetCollections();
        upstream.clearFaults();
        upstream.fault({ status: 200, body: stringifyJson(body) });
        const out = await runNode(
          nftTransactionsByToken,
          { query: { contract_address: GLYPHBOTS, token_id: "11111", type: ["all"] } },
          { config },
        );
        // A `next` the answer made up is refused by the server when the source follows it (400).
        if (out.error) expect(["upstream_bad_response", "upstream_rejected"]).toContain(out.error.details.code);
        else for (const record of out.data!.transactions) checkRecord(record as Record<string, any>);
      }),
      { numRuns: Math.max(10, Math.round(RUNS / 10)), seed: SEED },
    );
  });
});
