/**
 * src/activity/filter.ts on its own: parsing a trigger's filter (and what it refuses), the party on each side, the
 * predicate. The watch tests (test/watch) and the workflow package tests cover it through rules and triggers.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  filterPasses,
  parseRecordFilter,
  partyOn,
  type RecordFilter,
  WALLET_SIDES,
  type WalletSide,
} from "../../src/activity/filter.js";
import { partiesOf } from "../../src/activity/records.js";
import { ChainmailError, type Violation } from "../../src/core/errors.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 43);

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const A = addr(0xa1);
const B = addr(0xb2);
const C = addr(0xc3);
const NFT = "0x" + "ab".repeat(20);
const OTHER_NFT = "0x" + "cd".repeat(20);
const rec = (fields: Record<string, unknown>) => fields as unknown as TransactionRecord;

const sale = rec({
  type: "sale",
  seller_address: A,
  buyer_address: B,
  nft: { contract_address: NFT, token_id: "1" },
  quantity: 1,
  marketplace: "opensea",
});
const transfer = rec({
  type: "transfer",
  transfer_from: A,
  transfer_to: B,
  contract_address: NFT,
  token_id: "2",
  quantity: 3,
});
const mint = rec({ type: "mint", owner_address: B, contract_address: NFT, token_id: "3" });
const burn = rec({ type: "burn", owner_address: A, contract_address: NFT, token_id: "4" });
const list = rec({
  type: "list",
  lister_address: A,
  nft: { contract_address: NFT, token_id: "5" },
  marketplace: "blur",
});
const bid = rec({ type: "bid", bidder_address: C, nft: { contract_address: NFT, token_id: "6" }, marketplace: "x2y2" });

function refusal(value: unknown, field?: string): { message: string; violations: Violation[] } {
  try {
    parseRecordFilter(value, field);
  } catch (err) {
    expect(err).toBeInstanceOf(ChainmailError);
    const e = err as ChainmailError;
    expect(e.code).toBe("invalid_input");
    return { message: e.message, violations: e.details.violations as Violation[] };
  }
  throw new Error(`parseRecordFilter accepted ${JSON.stringify(value)}`);
}

describe("parseRecordFilter", () => {
  it("returns the filter as given when every field is valid", () => {
    const filter = {
      contracts: [NFT],
      wallets: [A.toUpperCase().replace("0X", "0x"), B],
      side: "buyer",
      marketplaces: ["opensea", "blur"],
      min_quantity: 2,
    };
    expect(parseRecordFilter(filter)).toEqual(filter);
    expect(parseRecordFilter({})).toEqual({});
  });

  it("names each problem under its field, all at once", () => {
    const { message, violations } = refusal({ wallets: ["0x1", A], side: "nobody", extra: 1 });
    expect(violations.map((v) => v.field)).toEqual(["filter.extra", "filter.wallets[0]", "filter.side"]);
    expect(violations[1]).toMatchObject({ value: "0x1", rule: "an address: 0x followed by 40 hex digits" });
    expect(violations[2]!.rule).toBe(`one of: ${WALLET_SIDES.join(", ")}`);
    expect(message).toMatch(/^Invalid input \(3 problems\): /);
  });

  it("uses the caller's field name", () => {
    const { violations } = refusal({ min_quantity: 0 }, "trigger");
    expect(violations).toEqual([
      expect.objectContaining({
        field: "trigger.min_quantity",
        value: 0,
        rule: "an integer >= 1 and <= 9007199254740991",
      }),
    ]);
  });

  it.each([
    ["not an object", 5, "filter", "an object"],
    ["an empty contracts list", { contracts: [] }, "filter.contracts", "an array of at least 1"],
    [
      "a repeated wallet",
      { wallets: [A, A] },
      "filter.wallets",
      `each item at most once (${JSON.stringify(A)} is given more than once)`,
    ],
    ["an empty marketplace", { marketplaces: [""] }, "filter.marketplaces[0]", undefined],
    ["a fractional min_quantity", { min_quantity: 1.5 }, "filter.min_quantity", undefined],
    ["side without wallets", { side: "buyer" }, "filter.side", "only with wallets"],
  ])("refuses %s", (_, value, field, rule) => {
    const { violations } = refusal(value);
    expect(violations.map((v) => v.field)).toEqual([field]);
    if (rule) expect(violations[0]!.rule).toBe(rule);
  });

  it("refuses more than 1000 contracts", () => {
    const contracts = Array.from({ length: 1001 }, (_, i) => addr(i + 1));
    expect(refusal({ contracts }).violations.map((v) => v.field)).toEqual(["filter.contracts"]);
    expect(parseRecordFilter({ contracts: contracts.slice(0, 1000) }).contracts).toHaveLength(1000);
  });
});

describe("partyOn", () => {
  const cases: [string, TransactionRecord, Partial<Record<Exclude<WalletSide, "any">, string>>][] = [
    ["sale", sale, { buyer: B, seller: A, from: A, to: B }],
    ["transfer", transfer, { from: A, to: B }],
    ["mint", mint, { to: B }],
    ["burn", burn, { from: A }],
    ["list", list, { lister: A }],
    ["bid", bid, { bidder: C }],
    ["cancel_list", rec({ type: "cancel_list", lister_address: B }), { lister: B }],
    ["cancel_bid", rec({ type: "cancel_bid", bidder_address: A }), { bidder: A }],
    ["mint as a transfer", rec({ type: "mint", transfer_from: A, transfer_to: C }), { to: C }],
    ["burn as a transfer", rec({ type: "burn", transfer_from: C, transfer_to: B }), { from: C }],
  ];
  it.each(cases)("gives the parties of a %s, and nothing on the other sides", (_, record, parties) => {
    for (const side of WALLET_SIDES) {
      if (side === "any") continue;
      expect(partyOn(record, side)).toBe(parties[side] ?? "");
    }
  });

  it("names the same from and to as the record's identity and mails do (records.ts), both shapes on one record included", () => {
    const both = [
      rec({ type: "mint", owner_address: A, transfer_from: C, transfer_to: C }),
      rec({ type: "burn", owner_address: B, transfer_from: C, transfer_to: C }),
    ];
    for (const record of both) {
      const { from, to } = partiesOf(record as unknown as Record<string, unknown>);
      expect([partyOn(record, "from"), partyOn(record, "to")]).toEqual([from.toLowerCase(), to.toLowerCase()]);
    }
    expect(partyOn(both[0]!, "to")).toBe(A);
    expect(partyOn(both[1]!, "from")).toBe(B);
  });

  it("lower-cases the address and gives nothing for a missing or non-string one", () => {
    expect(partyOn(rec({ type: "sale", buyer_address: "0xABCDEF" }), "buyer")).toBe("0xabcdef");
    expect(partyOn(rec({ type: "sale" }), "buyer")).toBe("");
    expect(partyOn(rec({ type: "transfer", transfer_to: 7 }), "to")).toBe("");
  });
});

describe("filterPasses", () => {
  it("passes everything with an empty filter", () => {
    for (const r of [sale, transfer, mint, burn, list, bid]) expect(filterPasses({}, r)).toBe(true);
  });

  it("keeps records of the given contracts, flat or nested, whatever the case", () => {
    expect(filterPasses({ contracts: [NFT.toUpperCase().replace("0X", "0x")] }, sale)).toBe(true);
    expect(filterPasses({ contracts: [NFT] }, transfer)).toBe(true);
    expect(filterPasses({ contracts: [OTHER_NFT] }, sale)).toBe(false);
    expect(filterPasses({ contracts: [OTHER_NFT, NFT] }, transfer)).toBe(true);
  });

  it("keeps records where a wallet is the party on the side (any side by default)", () => {
    expect(filterPasses({ wallets: [B] }, sale)).toBe(true);
    expect(filterPasses({ wallets: [B], side: "any" }, sale)).toBe(true);
    expect(filterPasses({ wallets: [B], side: "buyer" }, sale)).toBe(true);
    expect(filterPasses({ wallets: [B], side: "seller" }, sale)).toBe(false);
    expect(filterPasses({ wallets: [C] }, sale)).toBe(false);
    expect(filterPasses({ wallets: [C, A], side: "lister" }, list)).toBe(true);
    expect(filterPasses({ wallets: [C], side: "from" }, bid)).toBe(false);
    expect(filterPasses({ wallets: [B.toUpperCase().replace("0X", "0x")], side: "to" }, mint)).toBe(true);
  });

  it("never takes a missing party for a match", () => {
    // An empty wallet string would otherwise match the "" of every missing side.
    expect(filterPasses({ wallets: [""] }, mint)).toBe(false);
  });

  it("keeps records of the given marketplaces; a record without one never passes", () => {
    expect(filterPasses({ marketplaces: ["OpenSea"] }, sale)).toBe(true);
    expect(filterPasses({ marketplaces: ["blur"] }, sale)).toBe(false);
    expect(filterPasses({ marketplaces: ["blur", "x2y2"] }, bid)).toBe(true);
    expect(filterPasses({ marketplaces: ["opensea"] }, transfer)).toBe(false);
  });

  it("keeps records moving at least min_quantity; no quantity or a malformed one counts as one", () => {
    expect(filterPasses({ min_quantity: 3 }, transfer)).toBe(true);
    expect(filterPasses({ min_quantity: 4 }, transfer)).toBe(false);
    expect(filterPasses({ min_quantity: 1 }, mint)).toBe(true);
    expect(filterPasses({ min_quantity: 2 }, mint)).toBe(false);
    const huge = "1" + "0".repeat(70);
    expect(filterPasses({ min_quantity: Number.MAX_SAFE_INTEGER }, rec({ type: "transfer", quantity: huge }))).toBe(
      true,
    );
    expect(filterPasses({ min_quantity: 2 }, rec({ type: "transfer", quantity: 5n }))).toBe(true);
    for (const quantity of [2.5, "2.5", "-3", "1".repeat(79), null]) {
      expect(filterPasses({ min_quantity: 2 }, rec({ type: "transfer", quantity }))).toBe(false);
      expect(filterPasses({ min_quantity: 1 }, rec({ type: "transfer", quantity }))).toBe(true);
    }
  });

  it("needs every filter given to hold", () => {
    const all: RecordFilter = {
      contracts: [NFT],
      wallets: [A],
      side: "seller",
      marketplaces: ["opensea"],
      min_quantity: 1,
    };
    expect(filterPasses(all, sale)).toBe(true);
    expect(filterPasses({ ...all, contracts: [OTHER_NFT] }, sale)).toBe(false);
    expect(filterPasses({ ...all, side: "buyer" }, sale)).toBe(false);
    expect(filterPasses({ ...all, marketplaces: ["blur"] }, sale)).toBe(false);
    expect(filterPasses({ ...all, min_quantity: 2 }, sale)).toBe(false);
  });

  it("agrees with a plain reading of each field, for any record and filter (property)", () => {
    const pool = [A, B, C, addr(0xd4)];
    const party = fc.constantFrom(...pool);
    const caseOf = (a: string, upper: boolean) => (upper ? `0x${a.slice(2).toUpperCase()}` : a);
    const recordArb = fc.record({
      type: fc.constantFrom("sale", "transfer", "mint", "burn", "list", "bid", "cancel_list", "cancel_bid"),
      p1: party,
      p2: party,
      contract: fc.constantFrom(NFT, OTHER_NFT),
      marketplace: fc.option(fc.constantFrom("opensea", "blur", "x2y2"), { nil: undefined }),
      quantity: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
    });
    const filterArb = fc.record(
      {
        contracts: fc.uniqueArray(fc.constantFrom(NFT, OTHER_NFT), { minLength: 1 }),
        wallets: fc.uniqueArray(
          fc.tuple(party, fc.boolean()).map(([a, up]) => caseOf(a, up)),
          { minLength: 1 },
        ),
        side: fc.constantFrom(...WALLET_SIDES),
        marketplaces: fc.uniqueArray(fc.constantFrom("OpenSea", "blur", "x2y2"), { minLength: 1 }),
        min_quantity: fc.integer({ min: 1, max: 5 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(recordArb, filterArb, (r, filter) => {
        const record: Record<string, unknown> = { type: r.type, marketplace: r.marketplace, quantity: r.quantity };
        // Who is on which side, by the NFTPort shapes.
        const sides: Partial<Record<WalletSide, string>> = {};
        if (r.type === "sale") {
          Object.assign(record, { seller_address: r.p1, buyer_address: r.p2, nft: { contract_address: r.contract } });
          Object.assign(sides, { seller: r.p1, from: r.p1, buyer: r.p2, to: r.p2 });
        } else if (r.type === "transfer") {
          Object.assign(record, { transfer_from: r.p1, transfer_to: r.p2, contract_address: r.contract });
          Object.assign(sides, { from: r.p1, to: r.p2 });
        } else if (r.type === "mint" || r.type === "burn") {
          Object.assign(record, { owner_address: r.p1, contract_address: r.contract });
          sides[r.type === "mint" ? "to" : "from"] = r.p1;
        } else if (r.type.endsWith("list")) {
          Object.assign(record, { lister_address: r.p1, nft: { contract_address: r.contract } });
          sides.lister = r.p1;
        } else {
          Object.assign(record, { bidder_address: r.p1, nft: { contract_address: r.contract } });
          sides.bidder = r.p1;
        }
        const wanted = (filter.wallets ?? []).map((w) => w.toLowerCase());
        const onSide = (side: WalletSide) =>
          side === "any" ? Object.values(sides).some((p) => wanted.includes(p!)) : wanted.includes(sides[side] ?? "-");
        const expected =
          (!filter.contracts || filter.contracts.includes(r.contract)) &&
          (!filter.wallets || onSide(filter.side ?? "any")) &&
          (!filter.marketplaces ||
            (r.marketplace !== undefined && filter.marketplaces.some((m) => m.toLowerCase() === r.marketplace))) &&
          (filter.min_quantity === undefined || (r.quantity ?? 1) >= filter.min_quantity);
        expect(filterPasses(filter, rec(record))).toBe(expected);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
