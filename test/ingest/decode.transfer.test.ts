/**
 * The index decodes NFT transfer logs by hand from their topics and data (cheap: no ABI machinery per log). These
 * properties hold it to viem's `decodeEventLog` over the standard event ABIs, on logs that viem encodes: any
 * addresses, any uint256 token id and quantity (beyond 2^53 included), any ERC-1155 batch. Fixed seed. ERC-2309
 * `ConsecutiveTransfer` (no viem event here) is checked on laid-out logs: one mint per token, capped.
 */
import fc from "fast-check";
import { decodeEventLog, encodeAbiParameters, encodeEventTopics, getAddress, type Hex, parseAbi } from "viem";
import { describe, expect, it } from "vitest";
import { CONSECUTIVE_CAP, decodeTransfer, type RawLog, TOPIC } from "../../src/ingest/decode.js";
import { topic, word } from "../support/index-helpers.js";
import { BUYER, log, NFT } from "../support/venue-logs.js";

const abi = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  "event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)",
  "event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)",
]);
const settings = { numRuns: Number(process.env.PROPS_RUNS ?? 150), seed: 20261123 };

const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
/** Addresses lower case or checksummed (nodes answer lower case; a checksummed one must decode the same). */
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).chain((bytes) =>
  fc.boolean().map((checksummed) => {
    const hex = `0x${Buffer.from(bytes).toString("hex")}` as Hex;
    return checksummed ? getAddress(hex) : hex;
  }),
);
const position = fc.record({
  block: fc.integer({ min: 0, max: 2 ** 40 }),
  index: fc.integer({ min: 0, max: 2 ** 20 }),
  contract: address,
});

const rawLog = (at: { block: number; index: number; contract: string }, topics: Hex[], data: Hex): RawLog => ({
  address: at.contract,
  topics,
  data,
  blockNumber: `0x${at.block.toString(16)}`,
  blockHash: `0x${"ab".repeat(32)}`,
  transactionHash: `0x${"cd".repeat(32)}`,
  logIndex: `0x${at.index.toString(16)}`,
});

const lower = (a: string) => a.toLowerCase();
const kind = (from: string, to: string) =>
  /^0x0{40}$/.test(from) ? "mint" : /^0x0{40}$/.test(to) ? "burn" : "transfer";

describe("hand-written transfer decoding agrees with viem's decodeEventLog", () => {
  it("ERC-721 Transfer: from, to, token id (exact uint256), kind, position", () => {
    fc.assert(
      fc.property(position, address, address, uint256, (at, from, to, tokenId) => {
        const topics = encodeEventTopics({ abi, eventName: "Transfer", args: { from, to, tokenId } }) as Hex[];
        const log = rawLog(at, topics, "0x");
        const viem = decodeEventLog({ abi, topics: topics as [Hex, ...Hex[]], data: "0x", strict: true });
        const [record, ...more] = decodeTransfer(log);
        expect(more).toEqual([]);
        const args = viem.args as { from: string; to: string; tokenId: bigint };
        expect(record).toMatchObject({
          blockNumber: at.block,
          logIndex: at.index,
          batchIndex: 0,
          kind: kind(lower(args.from), lower(args.to)),
          contract: lower(at.contract),
          tokenId: args.tokenId.toString(),
          from: lower(args.from),
          to: lower(args.to),
          quantity: "1",
          contractType: "ERC721",
        });
      }),
      settings,
    );
  });

  it("ERC-1155 TransferSingle: from, to, id and value (exact uint256)", () => {
    fc.assert(
      fc.property(position, address, address, address, uint256, uint256, (at, operator, from, to, id, value) => {
        const topics = encodeEventTopics({ abi, eventName: "TransferSingle", args: { operator, from, to } }) as Hex[];
        const data = encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], [id, value]);
        const viem = decodeEventLog({ abi, topics: topics as [Hex, ...Hex[]], data, strict: true });
        const args = viem.args as { from: string; to: string; id: bigint; value: bigint };
        const [record, ...more] = decodeTransfer(rawLog(at, topics, data));
        expect(more).toEqual([]);
        expect(record).toMatchObject({
          kind: kind(lower(args.from), lower(args.to)),
          tokenId: args.id.toString(),
          quantity: args.value.toString(),
          from: lower(args.from),
          to: lower(args.to),
          contractType: "ERC1155",
          batchIndex: 0,
        });
      }),
      settings,
    );
  });

  it("ERC-1155 TransferBatch: one record per (id, value), in order", () => {
    const pairs = fc.array(fc.tuple(uint256, uint256), { maxLength: 20 });
    fc.assert(
      fc.property(position, address, address, address, pairs, (at, operator, from, to, items) => {
        const topics = encodeEventTopics({ abi, eventName: "TransferBatch", args: { operator, from, to } }) as Hex[];
        const data = encodeAbiParameters(
          [{ type: "uint256[]" }, { type: "uint256[]" }],
          [items.map(([id]) => id), items.map(([, value]) => value)],
        );
        const viem = decodeEventLog({ abi, topics: topics as [Hex, ...Hex[]], data, strict: true });
        const args = viem.args as { ids: readonly bigint[]; values: readonly bigint[] };
        const records = decodeTransfer(rawLog(at, topics, data));
        expect(records.map((r) => [r.tokenId, r.quantity, r.batchIndex])).toEqual(
          args.ids.map((id, i) => [id.toString(), args.values[i]!.toString(), i]),
        );
      }),
      settings,
    );
  });

  it("an ERC-20 Transfer (three topics) is no NFT record", () => {
    const erc20 = parseAbi(["event Transfer(address indexed from, address indexed to, uint256 value)"]);
    fc.assert(
      fc.property(position, address, address, uint256, (at, from, to, value) => {
        const topics = encodeEventTopics({ abi: erc20, eventName: "Transfer", args: { from, to } }) as Hex[];
        const data = encodeAbiParameters([{ type: "uint256" }], [value]);
        expect(decodeTransfer(rawLog(at, topics, data))).toEqual([]);
      }),
      settings,
    );
  });
});

describe("ERC-2309 ConsecutiveTransfer", () => {
  const consecutive = (first: bigint, last: bigint) =>
    log(NFT, [TOPIC.consecutiveTransfer, topic(first), topic(0), topic(BUYER)], word(last));

  it("becomes one mint per token, in order", () => {
    const records = decodeTransfer(consecutive(10n, 12n));
    expect(records.map((r) => [r.kind, r.tokenId, r.to, r.batchIndex])).toEqual([
      ["mint", "10", BUYER, 0],
      ["mint", "11", BUYER, 1],
      ["mint", "12", BUYER, 2],
    ]);
  });

  it(`stops at ${CONSECUTIVE_CAP} tokens per event and reports the rest as skipped`, () => {
    let skipped = 0;
    expect(decodeTransfer(consecutive(0n, BigInt(CONSECUTIVE_CAP - 1)), () => skipped++)).toHaveLength(CONSECUTIVE_CAP);
    expect(decodeTransfer(consecutive(0n, BigInt(CONSECUTIVE_CAP)), () => skipped++)).toEqual([]);
    expect(decodeTransfer(consecutive(0n, 2n ** 256n - 1n), () => skipped++)).toEqual([]);
    expect(skipped).toBe(2);
  });
});
