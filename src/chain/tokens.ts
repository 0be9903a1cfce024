/**
 * Mainnet's ERC-20 tokens worth one ETH each: what the index's pricing and the OpenSea source's USD prices alike
 * price from the ETH/USD feed.
 */

export const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
export const BLUR_POOL = "0x0000000000a39bb272e79075ade125fd351887ac";

/** ERC-20 tokens worth one ETH each (WETH, Blur Pool): their sales get a `price_usd` from the ETH/USD feed. */
export const MAINNET_ETH_TOKENS = [WETH, BLUR_POOL];
