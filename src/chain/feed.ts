/**
 * A Chainlink-style ETH/USD feed read by `eth_call`: its `decimals()` and its answer as it stood in a block
 * (`latestRoundData()` at that block). What the OpenSea source's sales and a watch's token details price with.
 */
import { type RpcClient, toHex } from "./rpc.js";

/** A Chainlink-style feed's `latestRoundData()` and `decimals()` selectors. */
const LATEST_ROUND_DATA = "0xfeaf968c";
const DECIMALS = "0x313ce567";

/** Each node's feed's `decimals()`, by node URL and feed: another node may be another chain. */
const feedDecimalsByNode = new Map<string, Promise<number | undefined>>();

/**
 * A feed's `decimals()` (0 to 36) asked of a node, or undefined when it answers something else; remembered per node
 * and feed, a failure not.
 */
export function feedDecimalsOf(rpc: RpcClient, feed: string): Promise<number | undefined> {
  const key = `${rpc.url}|${feed}`;
  let decimals = feedDecimalsByNode.get(key);
  if (!decimals) {
    decimals = rpc.call<string>("eth_call", [{ to: feed, data: DECIMALS }, "latest"]).then((data) => {
      if (typeof data !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(data)) return undefined;
      const n = BigInt(data);
      return n <= 36n ? Number(n) : undefined;
    });
    feedDecimalsByNode.set(key, decimals);
    decimals.catch(() => feedDecimalsByNode.delete(key));
  }
  return decimals;
}

/**
 * The feed's answer as it stood in `block`, when it is a positive int256. Rejects when the node fails, or has not the
 * state of that block.
 */
export async function feedAnswerAt(rpc: RpcClient, feed: string, block: number): Promise<bigint | undefined> {
  const data = await rpc.call<string>("eth_call", [{ to: feed, data: LATEST_ROUND_DATA }, toHex(block)]);
  if (typeof data !== "string" || !/^0x[0-9a-fA-F]{320}$/.test(data)) return undefined;
  const answer = BigInt.asIntN(256, BigInt(`0x${data.slice(66, 130)}`));
  return answer > 0n ? answer : undefined;
}
