/**
 * Sale prices (src/ingest/pricing.ts) on their own, over a real SQLite index: the amount in whole units of its
 * currency, in USD exactly when the sale is in ETH or a token worth one ETH and the feed has an answer; a sale before
 * its range's first answer priced at the commit with the answer in force before the range; a token's `decimals()`
 * asked of the chain once and kept in the index. `readDecimals` is the chain's answer as the indexer passes it in.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Pricing, type Unpriced } from "../../src/ingest/pricing.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";

const runs = Number(process.env.PROPS_RUNS ?? 200);
const FEED = "0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419";
const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";

let backend: IndexBackend;
let opened = 0;
beforeAll(async () => {
  backend = await openBackend("pricing");
});
afterAll(async () => {
  await backend?.close();
});

async function freshStore() {
  return IndexStore.open(await backend.target(`pricing-${opened++}`));
}

/** A chain answering `decimals()` from a table, counting what it was asked. */
function chainDecimals(table: Record<string, number | undefined>) {
  const asked: string[] = [];
  const read = async (address: string) => {
    asked.push(address);
    return table[address];
  };
  return { asked, read };
}

/** The exact value a decimal string states, times 10^scale (the string must not have more decimals than that). */
function scaled(text: string, scale: number): bigint {
  const [whole, fraction = ""] = text.split(".");
  expect(fraction.length).toBeLessThanOrEqual(scale);
  return BigInt(whole! + fraction) * 10n ** BigInt(scale - fraction.length);
}

describe("a sale's price", () => {
  it("is exact in whole ETH and in USD at the feed's answer, for any amount, answer and feed decimals", async () => {
    const store = await freshStore();
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.bigInt({ min: 0n, max: 10n ** 40n }),
          fc.bigInt({ min: 1n, max: 10n ** 20n }),
          fc.integer({ min: 0, max: 36 }),
          fc.boolean(),
          async (amount, answer, feedDecimals, inWeth) => {
            const chain = chainDecimals({ [FEED]: feedDecimals, [WETH]: 18 });
            const pricing = new Pricing(FEED, new Set([WETH]), store, chain.read);
            // Each run its own feed decimals: the store must not answer from an earlier run.
            await store.db.run("DELETE FROM tokens");
            await pricing.start();
            const price = await pricing.priceOf(
              { marketplace: "seaport", currency: inWeth ? WETH : null, amount },
              answer,
            );
            expect(scaled(price.price!, 18)).toBe(amount);
            expect(scaled(price.usd!, 18 + feedDecimals)).toBe(amount * answer);
            expect(price.pending).toBeUndefined();
          },
        ),
        { numRuns: runs },
      );
    } finally {
      await store.close();
    }
  });

  it("has no USD price in a token not worth one ETH, nor without a feed, nor where the chain states no amount", async () => {
    const store = await freshStore();
    try {
      const chain = chainDecimals({ [FEED]: 8, [USDC]: 6 });
      const pricing = new Pricing(FEED, new Set([WETH]), store, chain.read);
      await pricing.start();
      expect(await pricing.priceOf({ marketplace: "x", currency: USDC, amount: 2_500_000n }, 3n)).toEqual({
        price: "2.5",
        usd: null,
      });
      expect(await pricing.priceOf({ marketplace: "x", currency: null, amount: null }, 3n)).toEqual({
        price: null,
        usd: null,
      });
      const withoutFeed = new Pricing(undefined, new Set([WETH]), store, chain.read);
      await withoutFeed.start();
      expect(await withoutFeed.priceOf({ marketplace: "x", currency: null, amount: 10n ** 18n }, undefined)).toEqual({
        price: "1",
        usd: null,
      });
    } finally {
      await store.close();
    }
  });
});

describe("a sale before its range's first feed answer", () => {
  it("waits, and is priced at the commit with the answer in force before its range, or stays without one", async () => {
    const store = await freshStore();
    try {
      const pricing = new Pricing(FEED, new Set([WETH]), store, chainDecimals({ [FEED]: 8 }).read);
      await pricing.start();
      const pending = await pricing.priceOf({ marketplace: "x", currency: null, amount: 2n * 10n ** 18n }, undefined);
      expect(pending).toEqual({ price: "2", usd: null, pending: { amount: 2n * 10n ** 18n, decimals: 18 } });
      const row = () => ({ price_usd: null }) as Unpriced["row"];
      const first = { row: row(), ...pending.pending! };
      // No answer in the index yet: it stays without a USD price.
      await pricing.priceBefore(10, [first]);
      expect(first.row.price_usd).toBeNull();
      await store.commitRange({
        records: [],
        blocks: [],
        answers: [
          { block: 5, log: 0, answer: 1_000n * 10n ** 8n },
          { block: 9, log: 300, answer: 2_000n * 10n ** 8n },
          { block: 10, log: 0, answer: 9_999n * 10n ** 8n },
        ],
        lastBlock: 10,
      });
      const second = { row: row(), ...pending.pending! };
      await pricing.priceBefore(10, [second]);
      // The last answer of block 9, not block 10's (which the range itself holds).
      expect(second.row.price_usd).toBe("4000");
    } finally {
      await store.close();
    }
  });
});

describe("decimals", () => {
  it("asks the chain once per token, keeps the answer in the index, and falls back to 18 on no or a wild answer", async () => {
    const store = await freshStore();
    try {
      const odd = "0x00000000000000000000000000000000000000dd";
      const silent = "0x00000000000000000000000000000000000000ee";
      const chain = chainDecimals({ [FEED]: 8, [USDC]: 6, [odd]: 78 });
      const pricing = new Pricing(FEED, new Set(), store, chain.read);
      await pricing.start();
      for (let i = 0; i < 3; i++) {
        await Promise.all(
          [USDC, odd, silent].map((c) => pricing.priceOf({ marketplace: "x", currency: c, amount: 1n }, 1n)),
        );
      }
      expect(chain.asked.sort()).toEqual([FEED, USDC, odd, silent].sort());
      expect(await store.tokenDecimals(USDC)).toBe(6);
      expect(await store.tokenDecimals(odd)).toBe(18);
      expect(await store.tokenDecimals(silent)).toBe(18);
      // Another run over the same index asks the chain for none of them.
      const again = chainDecimals({});
      const next = new Pricing(FEED, new Set(), store, again.read);
      await next.start();
      expect(await next.priceOf({ marketplace: "x", currency: USDC, amount: 1_500_000n }, 1n)).toMatchObject({
        price: "1.5",
      });
      expect(again.asked).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("asks again after the chain failed to answer, rather than remembering the failure", async () => {
    const store = await freshStore();
    try {
      let calls = 0;
      const pricing = new Pricing(undefined, new Set(), store, async () => {
        calls++;
        if (calls === 1) throw new Error("node unreachable");
        return 6;
      });
      const sale = { marketplace: "x", currency: USDC, amount: 1_000_000n };
      await expect(pricing.priceOf(sale, undefined)).rejects.toThrow("node unreachable");
      expect(await pricing.priceOf(sale, undefined)).toEqual({ price: "1", usd: null });
      expect(calls).toBe(2);
    } finally {
      await store.close();
    }
  });
});
