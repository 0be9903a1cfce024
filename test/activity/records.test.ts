/**
 * src/activity/records.ts on its own: where a record sits in time, its NFT and parties whatever its shape, the keys
 * that take each record once across reads (the same after a re-read or a reorg, numbered when one transaction
 * repeats a record), and the later of two read positions.
 */
import { describe, expect, it } from "vitest";
import { later, nftOf, partiesOf, positionOf, recordKeys } from "../../src/activity/records.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const A = addr(0xa1);
const B = addr(0xb2);
const NFT = `0x${"ab".repeat(20)}`;
const rec = (fields: Record<string, unknown>) => fields as unknown as TransactionRecord;

const sale = (fields: Record<string, unknown> = {}) =>
  rec({
    type: "sale",
    seller_address: A,
    buyer_address: B,
    nft: { contract_address: NFT, token_id: "1", contract_type: "ERC721" },
    quantity: 1,
    price_details: { asset_type: "ETH", price: 1.5, price_usd: 3000 },
    transaction_hash: `0x${"11".repeat(32)}`,
    block_hash: `0x${"22".repeat(32)}`,
    block_number: 100,
    transaction_date: "2026-01-01T00:00:00",
    marketplace: "opensea",
    ...fields,
  });
const transfer = (fields: Record<string, unknown> = {}) =>
  rec({
    type: "transfer",
    transfer_from: A,
    transfer_to: B,
    contract_address: NFT,
    token_id: "2",
    quantity: 1,
    transaction_hash: `0x${"33".repeat(32)}`,
    block_number: 101,
    transaction_date: "2026-01-01T00:00:12",
    ...fields,
  });

describe("positionOf", () => {
  it("reads the block of on-chain records and the date of every record", () => {
    expect(positionOf(sale())).toEqual({ block: 100, date: "2026-01-01T00:00:00" });
    const listing = rec({ type: "list", lister_address: A, transaction_date: "2026-01-02T03:04:05" });
    expect(positionOf(listing)).toEqual({ block: undefined, date: "2026-01-02T03:04:05" });
    expect(positionOf(sale({ block_number: "100" })).block).toBeUndefined();
  });
});

describe("nftOf", () => {
  it("reads the NFT nested (sales, bids, listings) or flat (transfers), the contract in lower case", () => {
    expect(
      nftOf(sale({ nft: { contract_address: NFT.toUpperCase(), token_id: "7", contract_type: "ERC1155" } })),
    ).toEqual({ contract: NFT, tokenId: "7", contractType: "ERC1155" });
    expect(nftOf(transfer())).toEqual({ contract: NFT, tokenId: "2", contractType: "" });
    expect(nftOf({})).toEqual({ contract: "", tokenId: "", contractType: "" });
  });
});

describe("partiesOf", () => {
  it("reads each shape's parties as from and to", () => {
    expect(partiesOf(sale())).toEqual({ from: A, to: B });
    expect(partiesOf(transfer())).toEqual({ from: A, to: B });
    expect(partiesOf({ type: "mint", owner_address: B })).toEqual({ from: "", to: B });
    expect(partiesOf({ type: "mint", transfer_to: B })).toEqual({ from: "", to: B });
    expect(partiesOf({ type: "burn", owner_address: A })).toEqual({ from: A, to: "" });
    expect(partiesOf({ type: "burn", transfer_from: A })).toEqual({ from: A, to: "" });
    expect(partiesOf({ type: "bid", bidder_address: A })).toEqual({ from: A, to: "" });
    expect(partiesOf({ type: "cancel_bid", bidder_address: A })).toEqual({ from: A, to: "" });
    expect(partiesOf({ type: "list", lister_address: B })).toEqual({ from: B, to: "" });
    expect(partiesOf({ type: "cancel_list", lister_address: B })).toEqual({ from: B, to: "" });
    expect(partiesOf({ type: "sale" })).toEqual({ from: "", to: "" });
  });
});

describe("recordKeys", () => {
  const [key] = recordKeys([sale()]);

  it("reads a record again, or re-mined in another block with another rate, as the same key", () => {
    expect(key).toMatch(/^[0-9a-f]{24}$/);
    const remined = sale({
      block_number: 140,
      block_hash: `0x${"99".repeat(32)}`,
      transaction_date: "2026-01-01T00:08:00",
      price_details: { asset_type: "ETH", price: 1.5, price_usd: 2999 },
    });
    expect(recordKeys([remined])).toEqual([key]);
    expect(recordKeys([sale({ seller_address: A.toUpperCase().replace("0X", "0x") })])).toEqual([key]);
  });

  it("reads another transaction, token, party, quantity, price, currency, type or marketplace as another key", () => {
    const others = [
      sale({ transaction_hash: `0x${"12".repeat(32)}` }),
      sale({ nft: { contract_address: NFT, token_id: "2" } }),
      sale({ nft: { contract_address: addr(0xc3), token_id: "1" } }),
      sale({ buyer_address: addr(0xc3) }),
      sale({ quantity: 2 }),
      sale({ price_details: { asset_type: "ETH", price: 1.25 } }),
      sale({ price_details: { asset_type: "ERC20", price: 1.5, contract_address: addr(0xe7) } }),
      sale({ marketplace: "blur" }),
      sale({ type: "transfer" }),
    ];
    const keys = others.flatMap((r) => recordKeys([r]));
    expect(new Set([key, ...keys]).size).toBe(others.length + 1);
  });

  it("numbers a record repeated in one read .2, .3, … in order, and names rows without a transaction by their date", () => {
    const t = transfer();
    const [first, second, third] = recordKeys([t, sale(), t, t]).filter((_, i) => i !== 1);
    expect(second).toBe(`${first}.2`);
    expect(third).toBe(`${first}.3`);
    const listing = (date: string) =>
      rec({ type: "list", lister_address: A, nft: { contract_address: NFT, token_id: "1" }, transaction_date: date });
    const [monday, tuesday] = recordKeys([listing("2026-01-05T00:00:00"), listing("2026-01-06T00:00:00")]);
    expect(monday).not.toBe(tuesday);
    expect(recordKeys([listing("2026-01-05T00:00:00")])).toEqual([monday]);
  });
});

describe("later", () => {
  it("reads the later block and the later date each, keeping the first position when it is later in both", () => {
    const a = { block: 10, date: "2026-01-01T00:00:10" };
    const b = { block: 12, date: "2026-01-01T00:00:05" };
    expect(later(a, b)).toEqual({ block: 12, date: "2026-01-01T00:00:10" });
    expect(later(b, a)).toEqual({ block: 12, date: "2026-01-01T00:00:10" });
    const newer = { block: 20, date: "2026-01-02T00:00:00" };
    expect(later(newer, a)).toBe(newer);
    expect(later(undefined, a)).toBe(a);
    expect(later(a, undefined)).toBe(a);
    expect(later(undefined, undefined)).toBeUndefined();
  });

  it("keeps the block of the one that has one when the other (a listing) has none", () => {
    const listing = { block: undefined, date: "2026-03-01T00:00:00" };
    expect(later({ block: 7, date: "2026-01-01T00:00:00" }, listing)).toEqual({
      block: 7,
      date: "2026-03-01T00:00:00",
    });
    expect(later(listing, { block: 7, date: "2026-01-01T00:00:00" })).toEqual({
      block: 7,
      date: "2026-03-01T00:00:00",
    });
    // Dates compare as text: "2026-10-…" is later than "2026-09-…".
    expect(
      later({ block: undefined, date: "2026-09-30T00:00:00" }, { block: undefined, date: "2026-10-01T00:00:00" })?.date,
    ).toBe("2026-10-01T00:00:00");
  });
});
