/**
 * A rule's filters (contracts, wallets with their side, marketplaces, min_quantity, beside type and price): a record
 * passes exactly when the rule says, checked against a reading of the documented meaning written out here; and the
 * watch file names every problem of the filters at once.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { parseWatchConfig, type Rule } from "../../src/watch/config.js";
import { ETH_TOKENS, ruleWants } from "../../src/watch/records.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const addresses = ["0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2"];
const address = fc.constantFrom(...addresses, "0x00000000000000000000000000000000000000C3");
const KINDS = ["transfer", "mint", "burn", "sale", "bid", "list", "cancel_bid", "cancel_list"] as const;

/** A record of any kind, its parties in the fields that kind carries, in any letter case. */
const record = fc
  .record({
    type: fc.constantFrom(...KINDS),
    contract: address,
    a: address,
    b: address,
    marketplace: fc.option(fc.constantFrom("opensea", "Blur", "seaport"), { nil: undefined }),
    quantity: fc.option(fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constant("18446744073709551617")), {
      nil: undefined,
    }),
    upper: fc.boolean(),
  })
  .map(({ type, contract, a, b, marketplace, quantity, upper }) => {
    const cased = (s: string) => (upper ? s.toUpperCase().replace(/^0X/, "0x") : s);
    const r: Record<string, unknown> = { type, transaction_date: "2024-01-01T00:00:00" };
    if (type === "sale" || type === "bid" || type === "list" || type.startsWith("cancel")) {
      r.nft = { contract_address: cased(contract), token_id: "1" };
    } else {
      r.contract_address = cased(contract);
      r.token_id = "1";
    }
    if (type === "sale") Object.assign(r, { seller_address: cased(a), buyer_address: b });
    if (type === "transfer") Object.assign(r, { transfer_from: a, transfer_to: cased(b) });
    if (type === "mint") Object.assign(r, { transfer_from: "", owner_address: b });
    if (type === "burn") Object.assign(r, { owner_address: a, transfer_to: "" });
    if (type === "bid" || type === "cancel_bid") r.bidder_address = a;
    if (type === "list" || type === "cancel_list") r.lister_address = cased(a);
    if (marketplace !== undefined) r.marketplace = marketplace;
    if (quantity !== undefined) r.quantity = quantity;
    return r;
  });

const SIDES = ["any", "buyer", "seller", "from", "to", "lister", "bidder"] as const;
const filters = fc.record(
  {
    contracts: fc.uniqueArray(address, { minLength: 1, maxLength: 3 }),
    wallets: fc.uniqueArray(address, { minLength: 1, maxLength: 3 }),
    side: fc.constantFrom(...SIDES),
    marketplaces: fc.uniqueArray(fc.constantFrom("opensea", "blur", "seaport", "x2y2"), { minLength: 1 }),
    min_quantity: fc.integer({ min: 1, max: 25 }),
  },
  { requiredKeys: [] },
);

/** The documented meaning, spelled out per kind. */
function expected(f: Record<string, any>, r: Record<string, any>): boolean {
  const eq = (x: unknown, y: unknown) => String(x ?? "").toLowerCase() === String(y ?? "").toLowerCase();
  const contract = r.nft?.contract_address ?? r.contract_address;
  if (f.contracts && !f.contracts.some((c: string) => eq(c, contract))) return false;
  if (f.wallets) {
    const parties: Record<string, unknown[]> = {
      transfer: [r.transfer_from, r.transfer_to],
      mint: [undefined, r.owner_address],
      burn: [r.owner_address, undefined],
      sale: [r.seller_address, r.buyer_address],
    };
    const [from, to] = parties[r.type] ?? [undefined, undefined];
    const on: Record<string, unknown> = {
      buyer: r.type === "sale" ? r.buyer_address : undefined,
      seller: r.type === "sale" ? r.seller_address : undefined,
      from,
      to,
      lister: r.lister_address,
      bidder: r.bidder_address,
    };
    const side = f.side ?? "any";
    const candidates = side === "any" ? Object.values(on) : [on[side]];
    if (!f.wallets.some((w: string) => candidates.some((c) => c && eq(w, c)))) return false;
  }
  if (f.marketplaces && !f.marketplaces.some((m: string) => r.marketplace && eq(m, r.marketplace))) return false;
  if (f.min_quantity !== undefined && BigInt(r.quantity ?? 1) < BigInt(f.min_quantity)) return false;
  return true;
}

const ruleOf = (f: Record<string, unknown>): Rule =>
  ({ id: "r", type: ["all"], mode: "each", kind: "on-chain", ...f }) as unknown as Rule;

describe("rule filters", () => {
  it("a record passes exactly when the rule says", () => {
    fc.assert(
      fc.property(filters, record, (f, r) => {
        if (f.side !== undefined && f.wallets === undefined) delete f.side;
        expect(ruleWants(ruleOf(f), r as unknown as TransactionRecord, ETH_TOKENS)).toBe(expected(f, r));
      }),
      { numRuns: RUNS, seed: 35 },
    );
  });

  it("combines with type and price: every filter must hold", () => {
    const sale = {
      type: "sale",
      nft: { contract_address: addresses[0], token_id: "1" },
      seller_address: addresses[0],
      buyer_address: addresses[1],
      marketplace: "opensea",
      quantity: 3,
      price_details: { asset_type: "ETH", price: 2, price_usd: 4000 },
      transaction_date: "2024-01-01T00:00:00",
    } as unknown as TransactionRecord;
    const base = { contracts: [addresses[0]], wallets: [addresses[1]], side: "buyer", min_quantity: 3 };
    expect(ruleWants(ruleOf({ ...base, type: ["sale"], min_price: { eth: 1 } }), sale, ETH_TOKENS)).toBe(true);
    expect(ruleWants(ruleOf({ ...base, type: ["sale"], min_price: { eth: 3 } }), sale, ETH_TOKENS)).toBe(false);
    expect(ruleWants(ruleOf({ ...base, type: ["transfer"] }), sale, ETH_TOKENS)).toBe(false);
    expect(ruleWants(ruleOf({ ...base, side: "seller" }), sale, ETH_TOKENS)).toBe(false);
    expect(ruleWants(ruleOf({ ...base, marketplaces: ["blur"] }), sale, ETH_TOKENS)).toBe(false);
  });
});

describe("rule filters in the watch file", () => {
  const mail = { to: [{ Email: "a@example.com" }] };
  const fields = (value: unknown, source = "nftport"): string[] => {
    try {
      parseWatchConfig(value, source);
    } catch (err) {
      expect(err).toBeInstanceOf(ChainmailError);
      return ((err as ChainmailError).toPayload().details.violations as { field: string }[]).map((v) => v.field);
    }
    return [];
  };

  it("accepts the filters and reads a list of contracts as the whole chain kept to them", () => {
    const config = parseWatchConfig({
      from: { Email: "w@example.com" },
      rules: [
        {
          id: "r",
          contracts: addresses,
          wallets: [addresses[0]],
          side: "seller",
          marketplaces: ["opensea"],
          min_quantity: 2,
          mail,
        },
      ],
    });
    expect(config.rules[0]).toMatchObject({ kind: "on-chain", contracts: addresses, side: "seller", min_quantity: 2 });
  });

  it("names every problem of the filters at once", () => {
    expect(
      fields({
        from: { Email: "w@example.com" },
        rules: [
          {
            id: "r",
            contracts: ["0x12", addresses[0], addresses[0]],
            wallets: [],
            side: "owner",
            marketplaces: [""],
            min_quantity: 0,
            mail,
          },
        ],
      }).sort(),
    ).toEqual(
      [
        "rules[0].contracts",
        "rules[0].contracts[0]",
        "rules[0].wallets",
        "rules[0].side",
        "rules[0].marketplaces[0]",
        "rules[0].min_quantity",
      ].sort(),
    );
    expect(
      fields({
        from: { Email: "w@example.com" },
        rules: [
          { id: "a", contract_address: addresses[0], contracts: [addresses[1]], side: "buyer", mail },
          { id: "b", contracts: [addresses[1]], type: ["list"], mail },
        ],
      }),
    ).toEqual(["rules[0].contracts", "rules[0].side", "rules[1].type"]);
    expect(
      fields({ from: { Email: "w@example.com" }, rules: [{ id: "a", contracts: [addresses[1]], mail }] }, "opensea"),
    ).toEqual(["rules[0].contracts"]);
  });

  it('group "transaction": only with mode each; its templates may use count, token_ids and the totals', () => {
    const from = { Email: "w@example.com" };
    const grouped = { id: "g", group: "transaction", mail: { ...mail, subject: "{{var:count}} {{var:token_ids}}" } };
    expect(fields({ from, rules: [grouped] })).toEqual([]);
    expect(fields({ from, rules: [{ ...grouped, mode: "digest", digest: { records: 2 }, mail }] })).toEqual([
      "rules[0].group",
    ]);
    expect(fields({ from, rules: [{ id: "e", mail: { ...mail, subject: "{{var:token_ids}}" } }] })).toEqual([
      "rules[0].mail.subject",
    ]);
    expect(fields({ from, rules: [{ ...grouped, group: "block" }] })).toEqual(["rules[0].group"]);
  });

  it("confirmations: 0 to 64, counted on the own index's head", () => {
    const from = { Email: "w@example.com" };
    expect(fields({ from, rules: [{ id: "c", confirmations: 12, mail }] }, "index")).toEqual([]);
    expect(fields({ from, rules: [{ id: "c", confirmations: 65, mail }] }, "index")).toEqual([
      "rules[0].confirmations",
    ]);
    expect(fields({ from, rules: [{ id: "c", confirmations: 3, mail }] }, "nftport")).toEqual([
      "rules[0].confirmations",
    ]);
  });
});
