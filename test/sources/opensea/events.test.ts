/**
 * src/sources/opensea/events.ts on its own: `readEventsPage` reads the envelope (an array of at most MAX_EVENTS,
 * a cursor of visible ASCII or none), `kindOf` which record an event gives (by event type, order type and the zero
 * address; none for another chain, an offer on no token, a kind it does not know), and `toRecord` each kind's record
 * from own properties only, every field checked, the exact payment beside the price, or the first field that could
 * not be read. Pages of real answers through the source: test/sources/opensea/source.test.ts; any answer at all:
 * source.props.test.ts.
 */
import { describe, expect, it } from "vitest";
import { exactDecimalOf } from "../../../src/core/exact-decimals.js";
import {
  kindOf,
  MAX_CURSOR_LENGTH,
  MAX_EVENTS,
  type Mapped,
  readEventsPage,
  toRecord,
  Unreadable,
  ZERO_ADDRESS,
} from "../../../src/sources/opensea/events.js";
import { fixture } from "../../upstreams/opensea-data.js";

const BAYC = "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d";
const ALICE = "0xAAaaAAaaAAaaAAaaAAaaAAaaAAaaAAaaAAaaAAaa";
const BOB = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const TX = `0x${"Ab".repeat(32)}`;
const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";

const nft = (identifier = "7", standard: unknown = "erc721") => ({
  identifier,
  contract: BAYC.toUpperCase().replace("0X", "0x"),
  token_standard: standard,
});
const payment = (quantity = "1500000000000000000", token = ZERO_ADDRESS, decimals = 18) => ({
  quantity,
  token_address: token,
  decimals,
});
const base = { chain: "ethereum", event_timestamp: 1_700_000_000, quantity: 1 };

/** The record, failing the test when there is none. */
function recordOf(event: Record<string, unknown>): Mapped {
  const kind = kindOf(event);
  if (!kind) throw new Error("no kind");
  const mapped = toRecord(event, kind, "asset_events[0]");
  if (!mapped || mapped instanceof Unreadable) throw new Error(`no record: ${JSON.stringify(mapped)}`);
  return mapped;
}

describe("readEventsPage", () => {
  it("reads the events and the next cursor; none at the end (absent, null or empty)", () => {
    const events = [{ a: 1 }];
    expect(readEventsPage({ asset_events: events, next: "LXBrPTEyMzQ=" })).toEqual({ events, next: "LXBrPTEyMzQ=" });
    for (const next of [undefined, null, ""])
      expect(readEventsPage({ asset_events: [], next })).toEqual({ events: [], next: undefined });
    const real = fixture("bayc-sale-events.json");
    expect((readEventsPage(real) as { events: readonly unknown[] }).events).toHaveLength(real.asset_events.length);
  });

  it("names what it cannot read: the body, the events, the cursor", () => {
    const field = (body: unknown) => {
      const read = readEventsPage(body);
      return read instanceof Unreadable ? `${read.field} ${read.rule}` : "read";
    };
    expect(field([])).toBe("(body) is not an object");
    expect(field({ asset_events: {} })).toBe("asset_events is not an array");
    expect(field(Object.assign(Object.create({ asset_events: [] }), {}))).toBe("asset_events is not an array");
    expect(field({ asset_events: new Array(MAX_EVENTS + 1).fill({}) })).toBe(
      `asset_events holds more than ${MAX_EVENTS} events`,
    );
    expect(field({ asset_events: new Array(MAX_EVENTS).fill({}) })).toBe("read");
    for (const next of [5, "a b", "é", "x".repeat(MAX_CURSOR_LENGTH + 1), "line\n"]) {
      expect(field({ asset_events: [], next })).toMatch(/^next is not a cursor/);
    }
    expect(field({ asset_events: [], next: "x".repeat(MAX_CURSOR_LENGTH) })).toBe("read");
  });
});

describe("kindOf", () => {
  it("gives each event type's record kind", () => {
    const kinds = [
      [{ event_type: "sale" }, "sale"],
      [{ event_type: "mint" }, "mint"],
      [{ event_type: "transfer", from_address: ALICE, to_address: BOB }, "transfer"],
      [{ event_type: "transfer", from_address: ZERO_ADDRESS, to_address: BOB }, "mint"],
      [
        { event_type: "transfer", from_address: ALICE, to_address: ZERO_ADDRESS.toUpperCase().replace("0X", "0x") },
        "burn",
      ],
      [{ event_type: "order", order_type: "listing" }, "list"],
      [{ event_type: "order", order_type: "item_offer" }, "bid"],
      [{ event_type: "listing" }, "list"],
      [{ event_type: "offer" }, "bid"],
      [{ event_type: "offer", order_type: "item_offer" }, "bid"],
      [{ event_type: "cancel", order_type: "listing" }, "cancel_list"],
      [{ event_type: "cancel", order_type: "item_offer" }, "cancel_bid"],
    ] as const;
    for (const [event, kind] of kinds) expect([event, kindOf({ ...event, chain: "ethereum" })]).toEqual([event, kind]);
  });

  it("gives none for another chain, collection and trait offers, unknown kinds, or what is not an event", () => {
    for (const event of [
      { event_type: "sale", chain: "base" },
      { event_type: "sale" },
      { event_type: "order", order_type: "collection_offer", chain: "ethereum" },
      { event_type: "order", order_type: "trait_offer", chain: "ethereum" },
      { event_type: "offer", order_type: "collection_offer", chain: "ethereum" },
      { event_type: "cancel", chain: "ethereum" },
      { event_type: "airdrop", chain: "ethereum" },
      Object.assign(Object.create({ chain: "ethereum" }), { event_type: "sale" }),
      null,
      [],
      "sale",
    ]) {
      expect(kindOf(event)).toBeUndefined();
    }
  });
});

describe("toRecord", () => {
  it("a sale: buyer and seller in lower case, the NFT, the price with its exact payment, OpenSea's when it has an order", () => {
    const { record, payment: paid } = recordOf({
      ...base,
      event_type: "sale",
      nft: nft("007"),
      seller: ALICE,
      buyer: BOB,
      transaction: TX,
      payment: payment("333333333333333333"),
      order_hash: "0x1234",
    });
    expect(record).toEqual({
      type: "sale",
      buyer_address: BOB,
      seller_address: ALICE.toLowerCase(),
      nft: { contract_type: "ERC721", contract_address: BAYC, token_id: "7" },
      quantity: 1,
      price_details: { asset_type: "ETH", price: 0.3333333333333333 },
      transaction_hash: TX.toLowerCase(),
      transaction_date: "2023-11-14T22:13:20",
      marketplace: "opensea",
    });
    expect(exactDecimalOf((record as { price_details: object }).price_details, "price")).toBe("0.333333333333333333");
    expect(paid).toEqual({ amount: 333333333333333333n, decimals: 18 });
  });

  it("a sale elsewhere (no order hash), without a buyer, paid in a token, or without a payment", () => {
    const { record, payment: paid } = recordOf({
      ...base,
      event_type: "sale",
      nft: nft("1", "weird standard!"),
      seller: ALICE,
      buyer: "",
      transaction: TX,
      payment: payment("2500000", WETH, 6),
      order_hash: "",
    });
    expect(record).toEqual({
      type: "sale",
      seller_address: ALICE.toLowerCase(),
      nft: { contract_address: BAYC, token_id: "1" },
      quantity: 1,
      price_details: { asset_type: "ERC20", contract_address: WETH, price: 2.5 },
      transaction_hash: TX.toLowerCase(),
      transaction_date: "2023-11-14T22:13:20",
    });
    expect(paid).toEqual({ amount: 2_500_000n, decimals: 6 });
    const unpaid = recordOf({ ...base, event_type: "sale", nft: nft(), seller: ALICE, transaction: TX });
    expect(unpaid.payment).toBeUndefined();
    expect(unpaid.record).not.toHaveProperty("price_details");
  });

  it("transfers, mints and burns name their parties; a mint event names only its receiver", () => {
    const move = { ...base, nft: nft("12"), transaction: TX, quantity: 3 };
    expect(recordOf({ ...move, event_type: "transfer", from_address: ALICE, to_address: BOB }).record).toEqual({
      type: "transfer",
      transfer_from: ALICE.toLowerCase(),
      transfer_to: BOB,
      contract_address: BAYC,
      token_id: "12",
      quantity: 3,
      transaction_hash: TX.toLowerCase(),
      transaction_date: "2023-11-14T22:13:20",
    });
    expect(
      recordOf({ ...move, event_type: "transfer", from_address: ZERO_ADDRESS, to_address: BOB }).record,
    ).toMatchObject({ type: "mint", owner_address: BOB });
    expect(recordOf({ ...move, event_type: "mint", to_address: BOB }).record).toMatchObject({
      type: "mint",
      owner_address: BOB,
    });
    expect(
      recordOf({ ...move, event_type: "transfer", from_address: ALICE, to_address: ZERO_ADDRESS }).record,
    ).toMatchObject({
      type: "burn",
      owner_address: ALICE.toLowerCase(),
    });
  });

  it("listings and bids: the maker on its side, the NFT under asset (or nft), none for an order on no token", () => {
    const order = { ...base, maker: ALICE, payment: payment() };
    expect(recordOf({ ...order, event_type: "order", order_type: "listing", asset: nft("5") }).record).toEqual({
      type: "list",
      lister_address: ALICE.toLowerCase(),
      nft: { contract_type: "ERC721", contract_address: BAYC, token_id: "5" },
      quantity: 1,
      price_details: { asset_type: "ETH", price: 1.5 },
      transaction_date: "2023-11-14T22:13:20",
      marketplace: "opensea",
    });
    expect(recordOf({ ...order, event_type: "offer", nft: nft("6") }).record).toMatchObject({
      type: "bid",
      bidder_address: ALICE.toLowerCase(),
    });
    expect(
      recordOf({ ...order, event_type: "cancel", order_type: "item_offer", asset: nft("6") }).record,
    ).toMatchObject({ type: "cancel_bid" });
    expect(
      toRecord({ ...order, event_type: "order", order_type: "item_offer", asset: {} }, "bid", "e"),
    ).toBeUndefined();
  });

  it("reads a real answer's events", () => {
    const [sale] = fixture("bayc-sale-events.json").asset_events;
    expect(recordOf(sale!).record).toMatchObject({
      type: "sale",
      nft: { contract_address: BAYC, token_id: "2780" },
      transaction_date: "2025-12-04T10:07:59",
    });
    const [listing] = fixture("bayc-listing-events.json").asset_events;
    expect(recordOf(listing!).record).toMatchObject({
      type: "list",
      lister_address: "0x195f46025a6926968a1b3275822096eb12d97e70",
    });
  });

  it("quantities of any size, exactly; nothing that is not a non-negative integer", () => {
    const sale = { ...base, event_type: "sale", nft: nft(), seller: ALICE, transaction: TX };
    expect(recordOf({ ...sale, quantity: 2n ** 63n }).record).toMatchObject({ quantity: 2n ** 63n });
    expect(recordOf({ ...sale, quantity: "12" }).record).toMatchObject({ quantity: 12 });
    for (const quantity of [-1, 1.5, 1e20, "1e3", "-1", "9".repeat(79), null, undefined]) {
      expect(toRecord({ ...sale, quantity }, "sale", "asset_events[2]")).toEqual(
        new Unreadable("asset_events[2].quantity", "is not a non-negative integer"),
      );
    }
  });

  it("names the first field it cannot read, where it is", () => {
    const sale = { ...base, event_type: "sale", nft: nft(), seller: ALICE, transaction: TX, payment: payment() };
    const unreadable = (event: Record<string, unknown>, kind = kindOf(event)!) => {
      const read = toRecord(event, kind, "asset_events[4]");
      return read instanceof Unreadable ? `${read.field} ${read.rule}` : "read";
    };
    expect(unreadable({ ...sale, event_timestamp: "yesterday" })).toBe(
      "asset_events[4].event_timestamp is not a Unix time in seconds",
    );
    expect(unreadable({ ...sale, event_timestamp: 253_402_300_800 })).toMatch(/event_timestamp/);
    expect(unreadable({ ...sale, nft: "7" })).toBe("asset_events[4].nft is not an object");
    expect(unreadable({ ...sale, nft: { ...nft(), contract: "0x12" } })).toBe(
      "asset_events[4].nft.contract is not an address",
    );
    expect(unreadable({ ...sale, nft: nft("-1") })).toBe("asset_events[4].nft.identifier is not a decimal token id");
    expect(unreadable({ ...sale, nft: nft("1".repeat(79)) })).toBe(
      "asset_events[4].nft.identifier is not a decimal token id",
    );
    expect(unreadable({ ...sale, seller: "alice" })).toBe("asset_events[4].seller is not an address");
    expect(unreadable({ ...sale, buyer: 5 })).toBe("asset_events[4].buyer is not an address");
    expect(unreadable({ ...sale, transaction: "0x12" })).toBe("asset_events[4].transaction is not a transaction hash");
    expect(unreadable({ ...sale, payment: "1 ETH" })).toBe("asset_events[4].payment is not an object");
    expect(unreadable({ ...sale, payment: { ...payment(), quantity: 1 } })).toBe(
      "asset_events[4].payment.quantity is not a decimal integer string",
    );
    expect(unreadable({ ...sale, payment: { ...payment(), decimals: 78 } })).toBe(
      "asset_events[4].payment.decimals is not an integer from 0 to 77",
    );
    expect(unreadable({ ...sale, payment: { ...payment(), token_address: "eth" } })).toBe(
      "asset_events[4].payment.token_address is not an address",
    );
    const move = {
      ...base,
      event_type: "transfer",
      nft: nft(),
      transaction: TX,
      from_address: ALICE,
      to_address: "bob",
    };
    expect(unreadable(move)).toBe("asset_events[4].to_address is not an address");
    expect(unreadable({ ...base, event_type: "order", order_type: "listing", asset: nft(), maker: null })).toBe(
      "asset_events[4].maker is not an address",
    );
  });
});
