/**
 * The index source's records (src/sources/own-index/source.ts `toRecord`) mean exactly what the first, plainer mapping
 * (spreads, one date per row; kept here as the reference) meant: the same values, the same keys in the same order
 * (the raw body is their JSON), integers beyond 2^53 exact, on any row the store can hold, in any order of
 * timestamps (the date of the previous row is reused when it is the same). Fixed seed (PROPS_SEED); PROPS_RUNS
 * cases (default 300).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toExactInteger } from "../../../src/core/json.js";
import { toRecord } from "../../../src/sources/own-index/source.js";
import type { ActivityRow } from "../../../src/sources/own-index/store.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 23);

/** The mapping as it was first written. */
function reference(row: ActivityRow): unknown {
  const onChain = {
    transaction_hash: row.tx_hash,
    block_hash: row.block_hash,
    block_number: row.block_number,
    transaction_date: new Date(row.timestamp * 1000).toISOString().slice(0, 19),
  };
  const quantity = toExactInteger(row.quantity)!;
  if (row.kind === "sale") {
    return {
      type: "sale",
      buyer_address: row.to_addr,
      seller_address: row.from_addr,
      nft: {
        ...(row.contract_type ? { contract_type: row.contract_type } : {}),
        contract_address: row.contract,
        token_id: row.token_id,
      },
      quantity,
      price_details: {
        asset_type: row.currency ? "ERC20" : "ETH",
        ...(row.currency ? { contract_address: row.currency } : {}),
        ...(row.price === null ? {} : { price: Number(row.price) }),
        price_usd: row.price_usd === null ? null : Number(row.price_usd),
      },
      ...onChain,
      marketplace: row.marketplace ?? "opensea",
    };
  }
  const parties =
    row.kind === "mint"
      ? { owner_address: row.to_addr }
      : row.kind === "burn"
        ? { owner_address: row.from_addr }
        : { transfer_from: row.from_addr, transfer_to: row.to_addr };
  return { type: row.kind, ...parties, contract_address: row.contract, token_id: row.token_id, quantity, ...onChain };
}

const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString("hex")}`);
const hash = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `0x${Buffer.from(b).toString("hex")}`);
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }).map(String);
const decimal = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.nat({ max: 10 ** 6 }))
  .map(([i, f]) => (f ? `${i}.${f}` : `${i}`));
// Timestamps from a few values, so that neighbours often share one (as rows of one block do), and some far apart.
const timestamp = fc.oneof(
  fc.constantFrom(0, 1_650_000_000, 1_650_000_012),
  fc.integer({ min: 0, max: 2 ** 35 }),
  fc.integer({ min: 253_402_300_000, max: 2 ** 43 }),
);

const row: fc.Arbitrary<ActivityRow> = fc.record({
  block_number: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
  log_index: fc.nat({ max: 100_000 }),
  batch_index: fc.nat({ max: 1000 }),
  kind: fc.constantFrom("transfer", "mint", "burn", "sale"),
  contract: address,
  token_id: uint256,
  from_addr: address,
  to_addr: address,
  quantity: uint256,
  tx_hash: hash,
  block_hash: hash,
  timestamp,
  contract_type: fc.constantFrom("ERC721", "ERC1155", null),
  marketplace: fc.constantFrom("opensea", "looksrare", "blur", null),
  currency: fc.oneof(address, fc.constant(null)),
  price: fc.oneof(decimal, fc.constant(null)),
  price_usd: fc.oneof(decimal, fc.constant(null)),
});

/** The value, or the error thrown (a timestamp beyond `Date`'s range throws either way). */
function outcome(mapping: () => unknown): unknown {
  try {
    return mapping();
  } catch (err) {
    return { thrown: String(err) };
  }
}

const json = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));

describe("index records", () => {
  it("are the reference mapping's, value for value and key for key, for any sequence of rows", () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 60 }), (rows) => {
        for (const r of rows) {
          const record = outcome(() => toRecord(r));
          expect(record).toEqual(outcome(() => reference(r)));
          expect(json(record)).toBe(json(outcome(() => reference(r))));
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
