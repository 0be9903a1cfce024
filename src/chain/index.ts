/**
 * The chain folder's face: the Ethereum JSON-RPC client and its provider rules, the log bloom (Keccak-256) and
 * mainnet's ETH-like tokens. The index's ingestion and the OpenSea source (blocks, prices) use the chain through
 * this file alone; the folder imports nothing of theirs.
 */

export { type BloomBits, BloomBuilder, bloomBits, bloomHas, isBloom, keccak256 } from "./bloom.js";
export { type HeadMode, HeadWaiter, subscriptionUrl } from "./head-subscription.js";
export type { RpcUsage } from "./pacer.js";
export {
  isBeyondHead,
  isInvalidArgument,
  isMethodMissing,
  isUnknownBlock,
  type RangeRefusal,
  rangeRefusal,
} from "./provider-errors.js";
export { type LogRangeRule, PROVIDER, type Provider, type ProviderName, providerOf } from "./providers.js";
export type { ResultSlices } from "./result-slices.js";
export {
  type Header,
  hexToNumber,
  RangeTooSlow,
  RPC_UPSTREAM,
  RpcAnswerTooLarge,
  RpcClient,
  RpcError,
  toHex,
} from "./rpc.js";
export { seconds } from "./rpc-retry.js";
export { BLUR_POOL, MAINNET_ETH_TOKENS, WETH } from "./tokens.js";
