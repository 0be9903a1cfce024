/**
 * What OpenSea's events do not say, asked from the JSON-RPC node when one is configured (INDEX_RPC_URL): the block
 * of each on-chain record (`block_hash`, `block_number`, from `eth_getTransactionByHash`), and the `price_usd` of a
 * sale priced in ETH (or WETH, Blur Pool) from the ETH/USD feed (ETH_USD_FEED) as it stood in the sale's block
 * (`latestRoundData()` by `eth_call` at that block). Two JSON-RPC batches per page at most.
 *
 * A transaction the node does not know fails the page (the node is behind, or on another chain): the records would
 * otherwise lack their block without a word. A feed that cannot be read at a block (a node that keeps no old state)
 * leaves that sale's `price_usd` out.
 */
import type { Config } from "../../core/config.js";
import { ChainmailError } from "../../core/errors.js";
import { formatUnits, MAINNET_ETH_TOKENS } from "../index/decode.js";
import { RPC_UPSTREAM, RpcClient, RpcError, toHex } from "../index/rpc.js";
import type { Mapped } from "./events.js";

/** `latestRoundData()` and `decimals()` selectors. */
const LATEST_ROUND_DATA = "0xfeaf968c";
const DECIMALS = "0x313ce567";

const ETH_TOKENS: ReadonlySet<string> = new Set(MAINNET_ETH_TOKENS);

type Loose = Record<string, any>;

const feedDecimals = new Map<string, Promise<number>>();

function clientFor(config: Config, signal: AbortSignal | undefined): RpcClient | undefined {
  const { url, timeoutMs, retry } = config.indexRpc;
  return url ? new RpcClient(url, { pool: config.pool, timeoutMs, retry, signal }) : undefined;
}

/** Fills in blocks and USD prices in place; throws a ChainmailError when the node cannot answer. */
export async function enrich(
  mapped: readonly Mapped[],
  config: Config,
  signal: AbortSignal | undefined,
): Promise<void> {
  const rpc = clientFor(config, signal);
  const onChain = mapped.filter((m) => typeof (m.record as Loose).transaction_hash === "string");
  if (!rpc || onChain.length === 0) return;

  const hashes = [...new Set(onChain.map((m) => (m.record as Loose).transaction_hash as string))];
  const found = await rpc.batch(hashes.map((hash) => ({ method: "eth_getTransactionByHash", params: [hash] })));
  const blocks = new Map<string, { hash: string; number: number }>();
  hashes.forEach((hash, i) => {
    const tx = found[i] as { blockHash?: unknown; blockNumber?: unknown } | null;
    const blockHash = tx?.blockHash;
    const blockNumber = tx?.blockNumber;
    if (typeof blockHash !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(blockHash) || typeof blockNumber !== "string") {
      throw new ChainmailError(
        "UPSTREAM_BAD_RESPONSE",
        `The JSON-RPC node at ${rpc.origin} does not know transaction ${hash}, which OpenSea reports as mined.`,
        {
          hint: "The node may be behind or on another chain: check INDEX_RPC_URL, or unset it to leave blocks out.",
          details: { upstream: RPC_UPSTREAM, transaction_hash: hash },
        },
      );
    }
    const number = Number.parseInt(blockNumber, 16);
    if (!Number.isSafeInteger(number) || number < 0) {
      throw new ChainmailError("UPSTREAM_BAD_RESPONSE", `The JSON-RPC node answered block number ${blockNumber}.`, {
        details: { upstream: RPC_UPSTREAM, transaction_hash: hash },
      });
    }
    blocks.set(hash, { hash: blockHash.toLowerCase(), number });
  });
  for (const { record } of onChain) {
    const r = record as Loose;
    const block = blocks.get(r.transaction_hash)!;
    r.block_hash = block.hash;
    r.block_number = block.number;
  }

  const priced = onChain.filter(({ record, payment }) => {
    const p = (record as Loose).price_details;
    return record.type === "sale" && payment && (p.asset_type === "ETH" || ETH_TOKENS.has(String(p.contract_address)));
  });
  if (priced.length === 0) return;
  const feed = config.opensea.ethUsdFeed;
  const decimals = await decimalsOf(rpc, feed);
  const atBlocks = [...new Set(priced.map((m) => (m.record as Loose).block_number as number))];
  const answers = await Promise.all(
    atBlocks.map((block) =>
      rpc
        .call<string>("eth_call", [{ to: feed, data: LATEST_ROUND_DATA }, toHex(block)])
        .then(answerOf)
        // A node without the state of old blocks answers an error here: that sale has no USD price then.
        .catch((err) => {
          if (err instanceof RpcError) return undefined;
          throw err;
        }),
    ),
  );
  const rate = new Map(atBlocks.map((block, i) => [block, answers[i]]));
  for (const { record, payment } of priced) {
    const r = record as Loose;
    const answer = rate.get(r.block_number);
    if (answer === undefined || !payment) continue;
    r.price_details.price_usd = Number(formatUnits(payment.amount * answer, payment.decimals + decimals));
  }
}

/** The feed's answer (the second word of `latestRoundData()`), when it is a positive int256. */
function answerOf(data: unknown): bigint | undefined {
  if (typeof data !== "string" || !/^0x[0-9a-fA-F]{320}$/.test(data)) return undefined;
  const answer = BigInt.asIntN(256, BigInt(`0x${data.slice(66, 130)}`));
  return answer > 0n ? answer : undefined;
}

function decimalsOf(rpc: RpcClient, feed: string): Promise<number> {
  let decimals = feedDecimals.get(feed);
  if (!decimals) {
    decimals = rpc.call<string>("eth_call", [{ to: feed, data: DECIMALS }, "latest"]).then((data) => {
      const n = typeof data === "string" && /^0x[0-9a-fA-F]{64}$/.test(data) ? Number(BigInt(data)) : 8;
      return n <= 36 ? n : 8;
    });
    feedDecimals.set(feed, decimals);
    decimals.catch(() => feedDecimals.delete(feed));
  }
  return decimals;
}
