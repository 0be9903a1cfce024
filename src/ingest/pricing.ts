/**
 * Prices of sales: the amount in whole units of its currency (the token's `decimals()`), and in USD when a
 * Chainlink-style ETH/USD feed is indexed and the sale is priced in ETH or a token worth one ETH (WETH, Blur Pool).
 * Exact decimal strings; a price the chain does not state stays null, never a guess.
 *
 * The USD rate of a sale is the feed's answer in force at its log. A sale before its range's first answer is
 * priced at the commit, with the answer in force before the range (known only once the ranges before it are in).
 */

import type { ActivityRow, IndexStore, Price } from "../sources/own-index/index.js";
import type { SaleTerms } from "./decode.js";
import { formatUnits } from "./decode.js";

/** Beyond any log index: "the end of the block" in a (block, log) position. */
const MAX_LOG_INDEX = 2 ** 31 - 1;

/** A sale priced as ETH whose USD rate is the feed answer in force before its range. */
export interface Unpriced {
  row: ActivityRow;
  amount: bigint;
  decimals: number;
}

/** A sale's price, and what its USD price waits for when the range has no feed answer before it yet. */
export interface SalePrice extends Price {
  pending?: { amount: bigint; decimals: number };
}

/** Where a token's `decimals()` is read from when the store does not know it yet (fetcher.ts). */
export type ReadDecimals = (address: string) => Promise<number | undefined>;

export class Pricing {
  /** The feed's `decimals()`, read by `start`. */
  private feedDecimals = 8;
  private readonly decimals = new Map<string, Promise<number>>();

  constructor(
    /** The ETH/USD feed's address, lower case; undefined when none is indexed. */
    readonly feed: string | undefined,
    private readonly ethTokens: ReadonlySet<string>,
    private readonly store: IndexStore,
    private readonly readDecimals: ReadDecimals,
  ) {}

  /** Reads the feed's decimals (before any range). */
  async start(): Promise<void> {
    if (this.feed) this.feedDecimals = await this.decimalsOf(this.feed, 8);
  }

  /**
   * The price of a sale; `answer` is the feed's answer in force at its log. A sale priced as ETH before the range's
   * first answer comes back `pending`, for `priceBefore` to price at the commit.
   */
  async priceOf(sale: SaleTerms, answer: bigint | undefined): Promise<SalePrice> {
    const { currency, amount } = sale;
    const decimals = currency ? await this.decimalsOf(currency, 18) : 18;
    // A price the chain does not state stays NULL (the record then carries no `price`): never a guess.
    const price: SalePrice = { price: amount === null ? null : formatUnits(amount, decimals), usd: null };
    if (this.feed && amount !== null && (currency === null || this.ethTokens.has(currency))) {
      if (answer === undefined) price.pending = { amount, decimals };
      else price.usd = this.usd(amount, decimals, answer);
    }
    return price;
  }

  /** Prices sales left pending in the range starting at `from`, at the answer in force before it. */
  async priceBefore(from: number, unpriced: readonly Unpriced[]): Promise<void> {
    if (unpriced.length === 0) return;
    const rate = await this.store.answerAt(from - 1, MAX_LOG_INDEX);
    for (const { row, amount, decimals } of unpriced) row.price_usd = this.usd(amount, decimals, rate);
  }

  /** Exact USD value of an amount priced as ETH at a feed answer; null without an answer (never guessed). */
  private usd(amount: bigint, decimals: number, answer: bigint | undefined): string | null {
    return answer === undefined ? null : formatUnits(amount * answer, decimals + this.feedDecimals);
  }

  /** `decimals()` of a token or feed, cached in memory and in the store; `fallback` when the contract has none. */
  private decimalsOf(address: string, fallback: number): Promise<number> {
    let decimals = this.decimals.get(address);
    if (!decimals) {
      decimals = this.lookUp(address, fallback);
      this.decimals.set(address, decimals);
      decimals.catch(() => this.decimals.delete(address));
    }
    return decimals;
  }

  private async lookUp(address: string, fallback: number): Promise<number> {
    const known = await this.store.tokenDecimals(address);
    if (known !== undefined) return known;
    let decimals = (await this.readDecimals(address)) ?? fallback;
    if (!Number.isInteger(decimals) || decimals > 77) decimals = fallback;
    await this.store.setTokenDecimals(address, decimals);
    return decimals;
  }
}
