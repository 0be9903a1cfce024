/**
 * The logs' `blockTimestamp` is the node's word, read as untrusted input (issue 31): whatever a log carries there
 * (missing, a number, a string that is not a quantity, a quantity beyond 2^52, logs of one block that disagree), a
 * record gets either exactly the timestamp all its block's logs agree on, or its block's header's; nothing throws.
 * And the sizer for each provider's range rule starts where the rule promises (providers.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PROVIDER } from "../../src/chain/providers.js";
import type { Header } from "../../src/ingest/completeness.js";
import { type RawLog, TOPIC } from "../../src/ingest/decode.js";
import { LogDecoder } from "../../src/ingest/log-decoder.js";
import { DEFAULT_MAX_RANGE, sizerFor } from "../../src/ingest/range-sizer.js";
import { venueTable } from "../../src/ingest/venues/index.js";
import { stampTimes, timelessBlocks } from "../../src/sources/own-index/record.js";
import { address, topic } from "../support/index-helpers.js";

const NFT = address(0xa1);
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
/** The headers' timestamps: apart from any a log carries, so that a test can tell which one a record got. */
const HEADER_TIME = 7;

const decoder = () =>
  new LogDecoder({
    venues: venueTable([]),
    contracts: undefined,
    feed: undefined,
    loadTransactions: async () => {},
    transaction: () => undefined,
    priceOf: async () => ({ price: null, usd: null }),
  });

const timestamp = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: 0, max: 2 ** 40 }).map((n) => `0x${n.toString(16)}`),
  fc.bigInt({ min: 2n ** 52n, max: 2n ** 80n }).map((n) => `0x${n.toString(16)}`),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.constant(null),
  fc.constant({ toString: "0x1" }),
);

describe("timestamps from the logs", () => {
  it("stamps each record with the time all its block's logs carry, else its header's", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), timestamp), { minLength: 1, maxLength: 12 }),
        async (drawn) => {
          const sorted = [...drawn].sort((a, b) => a[0] - b[0]);
          const logs: RawLog[] = sorted.map(([block, time], i) => ({
            address: NFT,
            topics: [TOPIC.transfer, topic(address(0)), topic(address(0xb0b)), topic(i + 1)],
            data: "0x",
            blockNumber: `0x${block.toString(16)}`,
            blockHash: hash(block),
            transactionHash: hash(1000 + i),
            logIndex: `0x${i.toString(16)}`,
            ...(time === undefined ? {} : { blockTimestamp: time }),
          }));
          const decoded = await decoder().decode(() => [logs]);
          const headers = new Map<number, Header>();
          for (const block of timelessBlocks(decoded.records, decoded.times)) {
            headers.set(block, {
              number: `0x${block}`,
              hash: hash(block),
              parentHash: hash(0),
              timestamp: `0x${HEADER_TIME}`,
            });
          }
          stampTimes(decoded.records, decoded.times, headers);
          expect(decoded.records).toHaveLength(logs.length);
          for (const record of decoded.records) {
            const own = sorted.filter(([block]) => block === record.block_number).map(([, time]) => time);
            const agreed = own.every((time) => time === own[0]) ? own[0] : undefined;
            const valid = typeof agreed === "string" && /^0x[0-9a-f]{1,13}$/i.test(agreed);
            expect(record.timestamp).toBe(valid ? Number.parseInt(agreed, 16) : HEADER_TIME);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("the range sizer for each provider's rule", () => {
  it("starts at the largest range the rule promises, read alone until the density is known", () => {
    const alchemy = sizerFor(PROVIDER.alchemy.range);
    expect(alchemy.size).toBeGreaterThan(1_000_000);
    expect(alchemy.probing).toBe(true);
    expect(sizerFor(PROVIDER.infura.range).size).toBe(10_000);
    expect(sizerFor(PROVIDER.infura.range).allows(10_001)).toBe(false);
    expect(sizerFor(PROVIDER.quicknode.range).size).toBe(10_000);
    const generic = sizerFor(PROVIDER.generic.range);
    expect(generic.size).toBe(1);
    expect(generic.probing).toBe(false);
    expect(generic.allows(DEFAULT_MAX_RANGE + 1)).toBe(false);
    // A user's --max-range-style cap holds whatever the rule.
    expect(sizerFor(PROVIDER.alchemy.range, 500).size).toBe(500);
  });

  it("leaps over sparse blocks to the rule's largest range, and sizes dense ones to the logs aimed at", () => {
    const sizer = sizerFor(PROVIDER.infura.range);
    sizer.read(10_000, 3);
    expect(sizer.probing).toBe(false);
    expect(sizer.size).toBe(10_000);
    sizer.read(10_000, 100_000);
    expect(sizer.size).toBeLessThan(1_000);
  });
});
