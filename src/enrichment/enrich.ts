/**
 * Token details for people reading a mail or a workflow item, without a metadata vendor: the token's name and image
 * (its metadata, from the URI its contract states), the collection's name, the ENS names of both sides, and the USD
 * value of a sale at its block, all from the JSON-RPC node (INDEX_RPC_URL) and the token's own metadata host.
 *
 * Details only add: they are extra values beside a record, never written into it. Whatever fails (the node, a
 * hostile or slow metadata host, a malformed answer) leaves its value empty, and the whole of one call is bounded
 * by CHAINMAIL_ENRICH_BUDGET_MS, so a mail is never held by them: what is not in by then stays empty.
 */
import { nftOf, partiesOf } from "../activity/records.js";
import { feedAnswerAt, feedDecimalsOf, MAINNET_ETH_TOKENS, RpcClient } from "../chain/index.js";
import type { Config } from "../core/config.js";
import { setting } from "../core/env.js";
import { decimalText } from "../core/exact-decimals.js";
import type { Logger } from "../core/node.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import type { PrivateAllowance } from "./address-guard.js";
import type { EnrichmentCache } from "./cache.js";
import { contractNameOf, ensNameOf, tokenUriOf } from "./chain-reads.js";
import { cleanText, type MetadataFetch, readMetadata, type TokenMetadata } from "./metadata.js";

/** The values details add, by template variable name (`price_usd` only where the record has none). */
export const DETAIL_VARIABLES = ["token_name", "token_image", "collection_name", "from_name", "to_name"] as const;
export type TokenDetails = Partial<Record<(typeof DETAIL_VARIABLES)[number] | "price_usd", string>>;

export interface EnrichmentSettings {
  /** How metadata is fetched: metadata-fetch.ts's guarded GET in a process, pool-fetch.ts in a workflow host. */
  fetch: MetadataFetch;
  rpc: { url: string; timeoutMs: number; retry: Config["indexRpc"]["retry"]; pool: Config["pool"] };
  ethUsdFeed: string;
  ipfsGateway: string;
  allowPrivate: PrivateAllowance;
  budgetMs: number;
  metadataTimeoutMs: number;
  maxBytes: number;
  cacheMs: number;
}

/** The settings of token details, or undefined when they are off (CHAINMAIL_ENRICH=false, or no INDEX_RPC_URL). */
export function enrichmentSettings(config: Config, fetch: MetadataFetch): EnrichmentSettings | undefined {
  const { env } = config;
  const url = config.indexRpc.url;
  if (!url || setting(env, "CHAINMAIL_ENRICH") !== "true") return undefined;
  return {
    fetch,
    rpc: { url, timeoutMs: config.indexRpc.timeoutMs, retry: config.indexRpc.retry, pool: config.pool },
    ethUsdFeed: config.opensea.ethUsdFeed,
    ipfsGateway: setting(env, "CHAINMAIL_IPFS_GATEWAY"),
    allowPrivate: setting(env, "CHAINMAIL_FETCH_PRIVATE") === "true",
    budgetMs: setting(env, "CHAINMAIL_ENRICH_BUDGET_MS"),
    metadataTimeoutMs: setting(env, "CHAINMAIL_METADATA_TIMEOUT_MS"),
    maxBytes: setting(env, "CHAINMAIL_METADATA_MAX_BYTES"),
    cacheMs: setting(env, "CHAINMAIL_ENRICH_CACHE_MS"),
  };
}

type Loose = Record<string, any>;

const ETH_TOKENS: ReadonlySet<string> = new Set(MAINNET_ETH_TOKENS);
/** Lookups in flight at once (metadata hosts and node calls): a digest of 500 tokens is not 500 sockets. */
const AT_ONCE = 8;

/** One thing to look up, by its cache key. */
interface Lookup {
  key: string;
  run(rpc: RpcClient, signal: AbortSignal): Promise<unknown>;
}

/** A cached value: what was found (strings), or null for "asked, and there is none". */
type Found = Record<string, string> | string | null;

export class Enricher {
  constructor(
    readonly settings: EnrichmentSettings,
    private readonly cache: EnrichmentCache,
    private readonly logger?: Logger | undefined,
  ) {}

  /**
   * The details of each record (in order), as far as they come within the budget (and by `deadline`, ms since the
   * epoch, when a poll shares one budget across calls). Never rejects: a failure, the time running out or `signal`
   * aborting leaves values empty.
   */
  async detailsOf(
    records: readonly TransactionRecord[],
    options: { signal?: AbortSignal | undefined; deadline?: number | undefined } = {},
  ): Promise<TokenDetails[]> {
    const { signal } = options;
    const ms = Math.max(
      0,
      Math.min(this.settings.budgetMs, (options.deadline ?? Number.POSITIVE_INFINITY) - Date.now()),
    );
    const { rpc, stop, end } = this.budgeted(ms, signal);
    const found = new Map<string, Found>();
    const failures: string[] = [];
    try {
      await this.lookUp(records, rpc, stop, found, failures);
      if (stop.aborted && !signal?.aborted) failures.push(`not all in within ${ms} ms`);
    } finally {
      end();
    }
    if (failures.length) {
      this.logger?.warn(
        { failures: failures.length, first: failures[0] },
        "some token details could not be read; those values are left empty",
      );
    }
    return records.map((record) => this.detailsOfOne(record, found));
  }

  /** A JSON-RPC client whose calls all stop when `ms` have passed (or the caller's signal fires). */
  private budgeted(ms: number, signal: AbortSignal | undefined) {
    const { rpc: r } = this.settings;
    const budget = new AbortController();
    // The host's timer (the pool's wait): a workflow host's bundle starts none of its own.
    const ended = new AbortController();
    r.pool.wait(ms, ended.signal).then(
      () => budget.abort(),
      () => {},
    );
    const stop = signal ? AbortSignal.any([signal, budget.signal]) : budget.signal;
    const rpc = new RpcClient(r.url, {
      pool: r.pool,
      timeoutMs: Math.min(r.timeoutMs, ms || 1),
      // One retry at most: the budget is short, and a node that fails twice leaves the values empty.
      retry: { ...r.retry, maxRetries: Math.min(r.retry.maxRetries, 1) },
      throttleBudgetMs: this.settings.budgetMs,
      signal: stop,
    });
    const end = () => {
      ended.abort();
      budget.abort();
    };
    return { rpc, stop, end };
  }

  /** Fills `found` from the cache, then from the chain and the metadata (kept for next time); failures noted. */
  private async lookUp(
    records: readonly TransactionRecord[],
    rpc: RpcClient,
    stop: AbortSignal,
    found: Map<string, Found>,
    failures: string[],
  ): Promise<void> {
    const lookups = this.lookupsOf(records);
    const cached = await this.cache.get([...lookups.keys()]).catch(() => new Map<string, unknown>());
    for (const [key, value] of cached) found.set(key, value as Found);
    const todo = [...lookups.values()].filter((l) => !found.has(l.key));
    const fresh = new Map<string, Found>();
    const work = runAtOnce(todo, AT_ONCE, stop, async (lookup) => {
      try {
        const value = (await lookup.run(rpc, stop)) as Found | undefined;
        // undefined: no answer (a failure said so); it is not kept, so it is asked again next time.
        if (value === undefined) return;
        found.set(lookup.key, value);
        fresh.set(lookup.key, value);
      } catch (err) {
        if (!stop.aborted) failures.push(`${lookup.key}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    await Promise.race([work, abortedPromise(stop)]);
    await this.cache.put(fresh).catch((err: unknown) => {
      failures.push(`keeping them: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  /** A poll's lookups: every call made with it shares one budget, from now. */
  session(signal?: AbortSignal): (records: readonly TransactionRecord[]) => Promise<TokenDetails[]> {
    const deadline = Date.now() + this.settings.budgetMs;
    return (records) => (records.length ? this.detailsOf(records, { signal, deadline }) : Promise.resolve([]));
  }

  /** What the records need looked up, by cache key. */
  private lookupsOf(records: readonly TransactionRecord[]): Map<string, Lookup> {
    const out = new Map<string, Lookup>();
    const add = (key: string, run: Lookup["run"]) => {
      if (!out.has(key)) out.set(key, { key, run });
    };
    for (const record of records) {
      const { contract, tokenId, contractType } = nftOf(record as Loose);
      if (/^0x[0-9a-fA-F]{40}$/.test(contract)) {
        const address = contract.toLowerCase();
        add(`collection:${address}`, async (rpc) => (await contractNameOf(rpc, address)) ?? null);
        if (/^[0-9]{1,78}$/.test(tokenId)) {
          add(`token:${address}:${tokenId}`, (rpc, signal) =>
            this.tokenMetadata(rpc, address, BigInt(tokenId), contractType, signal),
          );
        }
      }
      for (const party of Object.values(partiesOf(record as Loose))) {
        if (/^0x[0-9a-fA-F]{40}$/.test(party) && !/^0x0{40}$/.test(party)) {
          const address = party.toLowerCase();
          add(`ens:${address}`, async (rpc) => (await ensNameOf(rpc, address)) ?? null);
        }
      }
      const block = this.unpricedBlock(record);
      if (block !== undefined) add(`usd:${this.settings.ethUsdFeed}:${block}`, (rpc) => this.usdRate(rpc, block));
    }
    return out;
  }

  private async tokenMetadata(
    rpc: RpcClient,
    contract: string,
    tokenId: bigint,
    kind: string,
    signal: AbortSignal,
  ): Promise<Found | undefined> {
    const uri = await tokenUriOf(rpc, contract, tokenId, kind, this.settings.maxBytes);
    if (!uri) return null;
    const metadata: TokenMetadata | string = await readMetadata(uri, { ...this.settings, signal });
    // A reason instead of metadata: the host failed or was refused. Not kept: asked again next time.
    if (typeof metadata === "string") throw new Error(metadata);
    return { ...(metadata.name ? { name: metadata.name } : {}), ...(metadata.image ? { image: metadata.image } : {}) };
  }

  /** The block of a sale priced in ETH (or WETH, Blur Pool) that has no USD value yet, when a feed may give one. */
  private unpricedBlock(record: TransactionRecord): number | undefined {
    const r = record as Loose;
    const p = r.price_details;
    if (r.type !== "sale" || !p || typeof p.price_usd === "number" || typeof p.price_usd === "string") return undefined;
    if (typeof r.block_number !== "number" || priceText(p) === undefined) return undefined;
    const inEth = p.asset_type === "ETH" || ETH_TOKENS.has(String(p.contract_address ?? "").toLowerCase());
    return inEth ? r.block_number : undefined;
  }

  /** The feed's answer at a block with its decimals, as `answer/decimals`; null when the feed gives none. */
  private async usdRate(rpc: RpcClient, block: number): Promise<Found | undefined> {
    const decimals = await feedDecimalsOf(rpc, this.settings.ethUsdFeed);
    if (decimals === undefined) return null;
    const answer = await feedAnswerAt(rpc, this.settings.ethUsdFeed, block);
    return answer === undefined ? null : { answer: answer.toString(), decimals: String(decimals) };
  }

  private detailsOfOne(record: TransactionRecord, found: ReadonlyMap<string, Found>): TokenDetails {
    const { contract, tokenId } = nftOf(record as Loose);
    const { from, to } = partiesOf(record as Loose);
    const address = contract.toLowerCase();
    const token = found.get(`token:${address}:${tokenId}`);
    const text = (value: Found | undefined) => (typeof value === "string" ? value : undefined);
    const details: TokenDetails = {
      token_name: typeof token === "object" && token ? token.name : undefined,
      token_image: typeof token === "object" && token ? token.image : undefined,
      collection_name: text(found.get(`collection:${address}`)),
      from_name: from ? text(found.get(`ens:${from.toLowerCase()}`)) : undefined,
      to_name: to ? text(found.get(`ens:${to.toLowerCase()}`)) : undefined,
      price_usd: this.usdOf(record, found),
    };
    const named = details.collection_name ? cleanText(details.collection_name, 200) : undefined;
    return Object.fromEntries(
      Object.entries({ ...details, collection_name: named }).filter(([, v]) => typeof v === "string" && v !== ""),
    ) as TokenDetails;
  }

  /** The USD value of an unpriced sale at its block's feed answer, exact. */
  private usdOf(record: TransactionRecord, found: ReadonlyMap<string, Found>): string | undefined {
    const block = this.unpricedBlock(record);
    if (block === undefined) return undefined;
    const rate = found.get(`usd:${this.settings.ethUsdFeed}:${block}`);
    if (!rate || typeof rate !== "object") return undefined;
    const price = priceText((record as Loose).price_details)!;
    const [whole, fraction = ""] = price.split(".");
    return decimalText(BigInt(whole! + fraction) * BigInt(rate.answer!), fraction.length + Number(rate.decimals));
  }
}

/** A sale's price as decimal text (its exact text when it has one). */
function priceText(p: Loose): string | undefined {
  const exact = p.price_exact ?? p.price;
  if (typeof exact === "string" && /^[0-9]{1,78}(\.[0-9]{1,78})?$/.test(exact)) return exact;
  if (typeof exact !== "number" || !Number.isFinite(exact) || exact < 0) return undefined;
  return exact.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 });
}

/** Runs `task` over `items`, `limit` at a time, until done or `signal` aborts. */
async function runAtOnce<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal.aborted) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function abortedPromise(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
