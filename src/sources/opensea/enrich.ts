/**
 * What OpenSea's events do not say, asked from the JSON-RPC node when one is configured (INDEX_RPC_URL): the block
 * of each on-chain record (`block_hash`, `block_number`, from `eth_getTransactionByHash`), and the `price_usd` of a
 * sale priced in ETH (or WETH, Blur Pool) from the ETH/USD feed (ETH_USD_FEED) as it stood in the sale's block
 * (`latestRoundData()` by `eth_call` at that block). Two JSON-RPC batches per page at most.
 *
 * Enrichment only adds: whatever the node answers (an error, a transaction it does not know, a feed that reverts or
 * answers nonsense, no answer at all), the records keep what OpenSea said and the fields the node could not give are
 * left out, with a warning on the logger. Only a cancelled call (the caller's signal) stops the page.
 */

import { feedAnswerAt, feedDecimalsOf, MAINNET_ETH_TOKENS, RpcClient } from "../../chain/index.js";
import type { Config } from "../../core/config.js";
import { decimalText, setExactDecimal } from "../../core/exact-decimals.js";
import type { Logger } from "../../core/node.js";
import type { Mapped } from "./events.js";

const ETH_TOKENS: ReadonlySet<string> = new Set(MAINNET_ETH_TOKENS);

type Loose = Record<string, any>;

function clientFor(config: Config, signal: AbortSignal | undefined): RpcClient | undefined {
  const { url, timeoutMs, retry } = config.indexRpc;
  return url ? new RpcClient(url, { pool: config.pool, timeoutMs, retry, signal }) : undefined;
}

/**
 * Fills in blocks and USD prices in place, as far as the node answers. Throws only when `signal` was aborted (the
 * caller's cancellation); every failure of the node leaves the fields it would have given out.
 */
export async function enrich(
  mapped: readonly Mapped[],
  config: Config,
  signal: AbortSignal | undefined,
  logger?: Logger,
): Promise<void> {
  const rpc = clientFor(config, signal);
  const onChain = mapped.filter((m) => typeof (m.record as Loose).transaction_hash === "string");
  if (!rpc || onChain.length === 0) return;
  const warn = (what: string, err?: unknown): void => {
    // A cancelled call is the caller's decision, not the node's failure: it ends the page.
    if (err !== undefined && signal?.aborted) throw err;
    const said = err === undefined ? "" : `: ${err instanceof Error ? err.message : String(err)}`;
    logger?.warn({ upstream: "JSON-RPC", node: rpc.origin }, `${what}${said}; left out`);
  };

  if (!(await fillBlocks(rpc, onChain, warn))) return;
  const priced = onChain.filter(({ record, payment }) => {
    const p = (record as Loose).price_details;
    return (
      record.type === "sale" &&
      payment &&
      typeof (record as Loose).block_number === "number" &&
      (p.asset_type === "ETH" || ETH_TOKENS.has(String(p.contract_address)))
    );
  });
  if (priced.length === 0) return;
  await fillUsdPrices(rpc, config.opensea.ethUsdFeed, priced, signal, warn);
}

type Warn = (what: string, err?: unknown) => void;

/** Each on-chain record's block, as the node knows its transaction; false when the node could not be asked. */
async function fillBlocks(rpc: RpcClient, onChain: readonly Mapped[], warn: Warn): Promise<boolean> {
  const hashes = [...new Set(onChain.map((m) => (m.record as Loose).transaction_hash as string))];
  let found: unknown[];
  try {
    found = await rpc.batch(hashes.map((hash) => ({ method: "eth_getTransactionByHash", params: [hash] })));
  } catch (err) {
    warn("The node could not give the blocks of OpenSea's records", err);
    return false;
  }
  const blocks = new Map<string, { hash: string; number: number }>();
  hashes.forEach((hash, i) => {
    const block = blockOf(found[i]);
    if (block) blocks.set(hash, block);
  });
  if (blocks.size < hashes.length) {
    // The node is behind, or on another chain: those records go without a block (and a USD price).
    warn(`The node does not know ${hashes.length - blocks.size} of ${hashes.length} transactions OpenSea reports`);
  }
  for (const { record } of onChain) {
    const r = record as Loose;
    const block = blocks.get(r.transaction_hash);
    if (!block) continue;
    r.block_hash = block.hash;
    r.block_number = block.number;
  }
  return true;
}

/** The USD price of sales in ETH (or an ETH-like token) at their block's feed answer. */
async function fillUsdPrices(
  rpc: RpcClient,
  feed: string,
  priced: readonly Mapped[],
  signal: AbortSignal | undefined,
  warn: Warn,
): Promise<void> {
  const decimals = await feedDecimalsOf(rpc, feed).catch((err: unknown) => {
    warn(`The ETH/USD feed ${feed} did not answer decimals()`, err);
    return undefined;
  });
  if (decimals === undefined) return warn(`The ETH/USD feed ${feed} answered no usable decimals()`);
  const atBlocks = [...new Set(priced.map((m) => (m.record as Loose).block_number as number))];
  const answers = await Promise.all(
    atBlocks.map((block) =>
      feedAnswerAt(rpc, feed, block)
        // A node without the state of old blocks answers an error here: that sale has no USD price then.
        .catch((err: unknown) => {
          if (signal?.aborted) throw err;
          return undefined;
        }),
    ),
  );
  const rate = new Map(atBlocks.map((block, i) => [block, answers[i]]));
  for (const { record, payment } of priced) {
    const r = record as Loose;
    const answer = rate.get(r.block_number);
    if (answer === undefined || !payment) continue;
    setExactDecimal(r.price_details, "price_usd", decimalText(payment.amount * answer, payment.decimals + decimals));
  }
}

/** A transaction's block, when the node's answer names one. */
function blockOf(tx: unknown): { hash: string; number: number } | undefined {
  if (typeof tx !== "object" || tx === null) return undefined;
  const blockHash = Object.hasOwn(tx, "blockHash") ? (tx as Loose).blockHash : undefined;
  const blockNumber = Object.hasOwn(tx, "blockNumber") ? (tx as Loose).blockNumber : undefined;
  if (typeof blockHash !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(blockHash)) return undefined;
  if (typeof blockNumber !== "string" || !/^0x[0-9a-fA-F]{1,14}$/.test(blockNumber)) return undefined;
  const number = Number.parseInt(blockNumber, 16);
  return Number.isSafeInteger(number) ? { hash: blockHash.toLowerCase(), number } : undefined;
}
