/** Pure parts of the index: decoders on hostile logs, exact units, provider range hints, continuations. */
import { describe, expect, it } from "vitest";
import { decodeTransfer, formatUnits, type RawLog, TOPIC } from "../../src/ingest/decode.js";
import { ORDER_FULFILLED, seaport } from "../../src/ingest/venues/seaport.js";
import { decodeContinuation, encodeContinuation } from "../../src/sources/own-index/source.js";
import { address, orderFulfilledData, topic, word } from "../support/index-helpers.js";

/** The Seaport decoder on one log alone (its transaction holds nothing else). */
const decodeSale = (log: RawLog) => seaport().decode(log, { logs: [log] })?.[0];

const log = (topics: string[], data: string): RawLog => ({
  address: address(0x1155),
  topics,
  data: `0x${data}`,
  blockNumber: "0x10",
  blockHash: `0x${"ab".repeat(32)}`,
  transactionHash: `0x${"cd".repeat(32)}`,
  logIndex: "0x2",
});

describe("decoders", () => {
  it("ignore a TransferBatch whose arrays claim more items than its data holds", () => {
    const topics = [TOPIC.transferBatch, topic(1), topic(2), topic(3)];
    const hostile = word(64) + word(96) + word(2n ** 40n) + word(2n ** 40n);
    expect(decodeTransfer(log(topics, hostile))).toEqual([]);
    expect(decodeTransfer(log(topics, word(64) + word(160) + word(2) + word(7) + word(8) + word(1) + word(5)))).toEqual(
      [],
    ); // two ids, one value
    const ok = decodeTransfer(
      log(topics, word(64) + word(160) + word(2) + word(7) + word(8) + word(2) + word(5) + word(6)),
    );
    expect(ok.map((r) => [r.tokenId, r.quantity, r.batchIndex, r.kind])).toEqual([
      ["7", "5", 0, "transfer"],
      ["8", "6", 1, "transfer"],
    ]);
  });

  it("read the buyer from a consideration item that is the NFT itself (matchOrders override)", () => {
    const nft = { itemType: 2, token: address(0x721), identifier: 9, amount: 1 };
    const data = orderFulfilledData(
      address(0x5ea),
      [nft],
      [
        { itemType: 0, token: address(0), identifier: 0, amount: 900, recipient: address(0xa) },
        { ...nft, recipient: address(0xb) },
        { itemType: 0, token: address(0), identifier: 0, amount: 100, recipient: address(0xfee) },
      ],
    );
    const sale = decodeSale({ ...log([ORDER_FULFILLED, topic(address(0xa)), topic(0)], data) });
    expect(sale).toMatchObject({ from: address(0xa), to: address(0xb), tokenId: "9", sale: { amount: 1000n } });
  });

  it("skip a listing paid in two currencies", () => {
    const data = orderFulfilledData(
      address(0x5ea),
      [{ itemType: 2, token: address(0x721), identifier: 9, amount: 1 }],
      [
        { itemType: 0, token: address(0), identifier: 0, amount: 900, recipient: address(0xa) },
        { itemType: 1, token: address(0xe7), identifier: 0, amount: 100, recipient: address(0xfee) },
      ],
    );
    expect(decodeSale(log([ORDER_FULFILLED, topic(address(0xa)), topic(0)], data))).toBeUndefined();
  });

  it("format amounts exactly", () => {
    expect(formatUnits(975n * 10n ** 15n, 18)).toBe("0.975");
    expect(formatUnits(25n * 10n ** 17n + 1n, 18)).toBe("2.500000000000000001");
    expect(formatUnits(0n, 18)).toBe("0");
    expect(formatUnits(123456789n, 6)).toBe("123.456789");
    expect(formatUnits(42n, 0)).toBe("42");
    expect(formatUnits(-5n, 1)).toBe("-0.5");
  });
});

describe("continuations", () => {
  it("round-trip and reject any change or another query", () => {
    const position = { block: 17_000_000, log: 12, batch: 3 };
    const token = encodeContinuation(position, "query-a");
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeContinuation(token, "query-a")).toEqual(position);
    expect(decodeContinuation(token, "query-b")).toBeUndefined();
    const text = Buffer.from(token, "base64url").toString();
    const edited = Buffer.from(text.replace(".12.", ".13.")).toString("base64url");
    expect(decodeContinuation(edited, "query-a")).toBeUndefined();
    expect(decodeContinuation("not base64!", "query-a")).toBeUndefined();
    expect(decodeContinuation("", "query-a")).toBeUndefined();
  });
});
