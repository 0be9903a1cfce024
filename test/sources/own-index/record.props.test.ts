/**
 * The record's column table (src/sources/own-index/record.ts) means exactly what the hand-written shapes it replaced
 * meant (kept here as the reference): the same column list in the same order, the same row from a decoded record
 * (`recordOf`: values, keys and their order, shared strings), the same row from an engine's positional values
 * (`activityRow`: SQLite's REAL price_usd read back as a string), and a stored row read back as itself. Fixed seed
 * (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Activity } from "../../../src/ingest/decode.js";
import {
  ACTIVITY_COLUMNS,
  type ActivityRow,
  activityRow,
  type Price,
  recordOf,
} from "../../../src/sources/own-index/record.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 29);

/** The column list as it was written out in store.ts. */
const REFERENCE_COLUMNS = [
  "block_number",
  "log_index",
  "batch_index",
  "kind",
  "contract",
  "token_id",
  "from_addr",
  "to_addr",
  "quantity",
  "tx_hash",
  "block_hash",
  "timestamp",
  "contract_type",
  "marketplace",
  "currency",
  "price",
  "price_usd",
];

/** `recordOf` as it was written out in record.ts. */
function referenceRecord(a: Activity, price: Price | undefined, shared: (value: string) => string): ActivityRow {
  return {
    block_number: a.blockNumber,
    log_index: a.logIndex,
    batch_index: a.batchIndex,
    kind: a.kind,
    contract: shared(a.contract),
    token_id: a.tokenId,
    from_addr: shared(a.from),
    to_addr: shared(a.to),
    quantity: a.quantity,
    tx_hash: shared(a.txHash),
    block_hash: shared(a.blockHash),
    timestamp: 0,
    contract_type: a.contractType,
    marketplace: a.sale?.marketplace ?? null,
    currency: a.sale?.currency ?? null,
    price: price?.price ?? null,
    price_usd: price?.usd ?? null,
  };
}

/** The positional reader as it was written out in store.ts. */
function referenceRow(v: unknown[]): ActivityRow {
  const priceUsd = v[16] as string | number | null;
  return {
    block_number: v[0] as number,
    log_index: v[1] as number,
    batch_index: v[2] as number,
    kind: v[3] as ActivityRow["kind"],
    contract: v[4] as string,
    token_id: v[5] as string,
    from_addr: v[6] as string,
    to_addr: v[7] as string,
    quantity: v[8] as string,
    tx_hash: v[9] as string,
    block_hash: v[10] as string,
    timestamp: v[11] as number,
    contract_type: v[12] as string | null,
    marketplace: v[13] as string | null,
    currency: v[14] as string | null,
    price: v[15] as string | null,
    price_usd: priceUsd === null ? null : String(priceUsd),
  };
}

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString("hex")}`);
const decimal = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }).map(String);
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

const activity: fc.Arbitrary<Activity> = fc.record(
  {
    blockNumber: fc.nat(),
    logIndex: fc.nat(),
    batchIndex: fc.nat(),
    kind: fc.constantFrom("mint", "transfer", "burn", "sale"),
    contract: hex(20),
    tokenId: decimal,
    from: hex(20),
    to: hex(20),
    quantity: decimal,
    txHash: hex(32),
    blockHash: hex(32),
    contractType: nullable(fc.constantFrom("ERC721", "ERC1155", "ERC721_lazy", "ERC1155_lazy")),
    sale: fc.record({
      marketplace: fc.constantFrom("opensea", "looksrare", "blur"),
      currency: nullable(hex(20)),
      amount: nullable(fc.bigInt({ min: 0n, max: 2n ** 200n })),
    }),
  },
  {
    requiredKeys: [
      "blockNumber",
      "logIndex",
      "batchIndex",
      "kind",
      "contract",
      "tokenId",
      "from",
      "to",
      "quantity",
      "txHash",
      "blockHash",
      "contractType",
    ],
  },
) as fc.Arbitrary<Activity>;

const price: fc.Arbitrary<Price | undefined> = fc.option(
  fc.record({
    price: nullable(decimal),
    usd: nullable(fc.double({ noNaN: true, noDefaultInfinity: true }).map(String)),
  }),
  { nil: undefined },
);

/** A row as an engine hands it back: price_usd a decimal string (PostgreSQL) or a double (SQLite's REAL). */
const engineValues = fc
  .tuple(activity, price, fc.nat(), nullable(fc.oneof(decimal, fc.double({ noNaN: true, noDefaultInfinity: true }))))
  .map(([a, p, timestamp, usd]) => {
    const row = { ...referenceRecord(a, p, (s) => s), timestamp };
    return [...REFERENCE_COLUMNS.slice(0, 16).map((c) => row[c as keyof ActivityRow]), usd];
  });

describe("the record's column table", () => {
  it("lists the columns as the store listed them", () => {
    expect(ACTIVITY_COLUMNS).toEqual(REFERENCE_COLUMNS);
  });

  it("maps a decoded record as recordOf did: values, key order, shared strings", () => {
    fc.assert(
      fc.property(activity, price, (a, p) => {
        const seen: string[] = [];
        const shared = (value: string) => {
          seen.push(value);
          return value.toUpperCase();
        };
        const expectedSeen: string[] = [];
        const want = referenceRecord(a, p, (value) => {
          expectedSeen.push(value);
          return value.toUpperCase();
        });
        const got = recordOf(a, p, shared);
        expect(got).toStrictEqual(want);
        expect(Object.keys(got)).toEqual(Object.keys(want));
        expect(seen).toEqual(expectedSeen);
        // Without `shared`, the strings as decoded.
        expect(recordOf(a, p)).toStrictEqual(referenceRecord(a, p, (value) => value));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("reads an engine's positional values as the reader v[0]…v[16] did, and a stored row back as itself", () => {
    fc.assert(
      fc.property(engineValues, (values) => {
        const got = activityRow(values);
        expect(got).toStrictEqual(referenceRow(values));
        expect(Object.keys(got)).toEqual(REFERENCE_COLUMNS);
        expect(activityRow(ACTIVITY_COLUMNS.map((c) => got[c]))).toStrictEqual(got);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
