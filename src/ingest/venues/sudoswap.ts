/**
 * Sudoswap pools (each pair is its own contract, so any address qualifies; only the whole-chain index sees them).
 * The NFTs are the transfers to (`SwapNFTInPair`: sold into the pool) or from (`SwapNFTOutPair`: bought from it)
 * the emitting pair in the same transaction, since its previous swap. Price:
 *
 * - v2 events carry the amount: `SwapNFTOutPair(uint256 amountIn, …)` = what the buyer paid, fees included;
 *   `SwapNFTInPair(uint256 amountOut, …)` = what the seller received (after the pool's fees).
 * - v1 events carry nothing. A pool trading an ERC-20 moves it in logs: the amount into the pair (a buy) or out of
 *   it (a sale). An ETH pool's payment is an internal transfer that no log shows (excess ETH is refunded inside
 *   the call), so the price of a v1 ETH swap is unknown.
 *
 * The currency is the ERC-20 that moved between the pair and the trader, else ETH. Several NFTs in one swap
 * share the amount evenly.
 */
import { type RawLog, readUintArray, topic0, wordBig, wordCount } from "../decode.js";
import { nftTransfers, sale, share, type TxContext, tokenTransfers, type Venue } from "./venue.js";

const V1_IN = "0x3614eb567740a0ee3897c0e2b11ad6a5720d2e4438f9c8accf6c95c24af3a470";
const V1_OUT = "0xbc479dfc6cb9c1a9d880f987ee4b30fa43dd7f06aec121db685b67d587c93c93";
const V2_IN_IDS = "0x7a0e7e58d91fd23a96b0008604db1b2d1cee4aae434e3aad9a20fdd7c0995f89";
const V2_OUT_IDS = "0xa13c46268c53408442d94eb370f2e476cb7f0fbe027ae5bad73ce13d4469c8b9";
const V2_IN_COUNT = "0x58e7e2e8d4c949c019e4fe5f6e2a8f10e4e078a8747730386e9a230da8c969f0";
const V2_OUT_COUNT = "0xd9c2402e1a067734ae78dab98f06d5b28e8a2d2c6370ec0e6ff8cc2749d050f1";
const SWAPS = new Set([V1_IN, V1_OUT, V2_IN_IDS, V2_OUT_IDS, V2_IN_COUNT, V2_OUT_COUNT]);
const INTO_PAIR = new Set([V1_IN, V2_IN_IDS, V2_IN_COUNT]);

/** The logs of `tx` after the pair's previous swap event, up to `log`. */
function sinceLastSwap(log: RawLog, tx: TxContext): readonly RawLog[] {
  const at = tx.logs.indexOf(log);
  let start = 0;
  for (let i = at - 1; i >= 0; i--) {
    const other = tx.logs[i]!;
    if (other.address.toLowerCase() === log.address.toLowerCase() && SWAPS.has(topic0(other) ?? "")) {
      start = i + 1;
      break;
    }
  }
  return tx.logs.slice(start, at);
}

export const sudoswap: Venue = {
  marketplace: "sudoswap",
  addresses: "any",
  topics: [...SWAPS],
  decode(log, tx) {
    const topic = topic0(log)!;
    const pair = log.address.toLowerCase();
    const into = INTO_PAIR.has(topic);
    const v1 = topic === V1_IN || topic === V1_OUT;
    if (log.topics.length !== 1 || (v1 ? wordCount(log.data) !== 0 : wordCount(log.data) < 2)) return undefined;
    if (topic === V2_IN_IDS || topic === V2_OUT_IDS) {
      if (readUintArray(log.data, 1) === undefined) return undefined;
    }
    const segment = sinceLastSwap(log, tx);
    const nfts = nftTransfers(segment).filter((t) => (into ? t.to === pair : t.from === pair));
    if (nfts.length === 0) return undefined;
    const payments = tokenTransfers(segment).filter((t) =>
      into ? t.from === pair && t.to !== pair : t.to === pair && t.from !== pair,
    );
    const currency = payments[0]?.token ?? null;
    let total: bigint | null;
    if (!v1) total = wordBig(log.data, 0);
    else if (currency) total = payments.filter((t) => t.token === currency).reduce((sum, t) => sum + t.amount, 0n);
    else total = null;
    const terms = { marketplace: "sudoswap", currency, amount: share(total, nfts.length) };
    return nfts.map((nft, i) => {
      const [seller, buyer] = into ? [nft.from, pair] : [pair, nft.to];
      return sale(
        log,
        { contract: nft.contract, tokenId: nft.tokenId, quantity: nft.quantity, contractType: nft.type },
        seller,
        buyer,
        terms,
        i,
      );
    });
  },
};
