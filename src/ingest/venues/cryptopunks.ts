/**
 * CryptoPunks (0xb47e…3bbb, older than ERC-721: records carry no `contract_type`, as NFTPort's do not).
 *
 * - `Assign(address indexed to, uint256 punkIndex)`: the original claim, a `mint`.
 * - `PunkTransfer(address indexed from, address indexed to, uint256 punkIndex)`: a `transfer`.
 * - `PunkBought(uint256 indexed punkIndex, uint256 value, address indexed from, address indexed to)`: a sale, and
 *   the punk's own `transfer` record at the contract's `Transfer(from, to, 1)` log just before it (a sale emits no
 *   PunkTransfer). The contract has a known bug: `acceptBidForPunk` clears the bid before logging it, so an
 *   accepted bid logs value 0 and buyer 0x0. Both are repaired from the same transaction, as Reservoir does: the
 *   buyer from that `Transfer`, the price from the call's `minPrice` (the amount the seller accepted; the
 *   marketplace's own app passes the bid itself). A transaction that is not a direct `acceptBidForPunk` call
 *   leaves the price unknown.
 */
import {
  type Activity,
  type RawLog,
  TOPIC,
  topic0,
  topicAddress,
  transferRecord,
  wordBig,
  ZERO_ADDRESS,
} from "../decode.js";
import { sale, type TxContext, type Venue } from "./venue.js";

export const CRYPTOPUNKS = "0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb";
const ASSIGN = "0x8a0e37b73a0d9c82e205d4d1a3ff3d0b57ce5f4d7bccf6bac03336dc101cb7ba";
const PUNK_TRANSFER = "0x05af636b70da6819000c49f85b21fa82081c632069bb626f30932034099107d8";
const PUNK_BOUGHT = "0x58e5d5a525e3b40bc15abaa38b5882678db1ee68befd2f60bafe3a7fd06db9e3";
/** `acceptBidForPunk(uint256 punkIndex, uint256 minPrice)` */
const ACCEPT_BID = "0x23165b75";

/** The punks contract's own `Transfer(from, to, 1)` closest before `log` in its transaction. */
function ownTransferBefore(log: RawLog, tx: TxContext): RawLog | undefined {
  const at = tx.logs.indexOf(log);
  for (let i = at - 1; i >= 0; i--) {
    const candidate = tx.logs[i]!;
    if (candidate.address.toLowerCase() === CRYPTOPUNKS && topic0(candidate) === TOPIC.transfer) return candidate;
    if (topic0(candidate) === PUNK_BOUGHT) return undefined;
  }
  return undefined;
}

function bought(log: RawLog, tx: TxContext): Activity[] | undefined {
  if (log.topics.length !== 4) return undefined;
  const punk = BigInt(log.topics[1]!);
  const seller = topicAddress(log.topics[2]!);
  let buyer = topicAddress(log.topics[3]!);
  let amount: bigint | null = wordBig(log.data, 0);
  const transfer = ownTransferBefore(log, tx);
  if (buyer === ZERO_ADDRESS) {
    // The accepted-bid bug: value and buyer were cleared before the event.
    if (transfer?.topics.length !== 3) return undefined;
    buyer = topicAddress(transfer.topics[2]!);
    const input = tx.transaction?.input.toLowerCase() ?? "";
    const acceptsThisPunk =
      tx.transaction?.to?.toLowerCase() === CRYPTOPUNKS &&
      input.startsWith(ACCEPT_BID) &&
      input.length >= 10 + 128 &&
      BigInt(`0x${input.slice(10, 74)}`) === punk;
    amount = acceptsThisPunk ? BigInt(`0x${input.slice(74, 138)}`) : null;
  }
  const nft = { contract: CRYPTOPUNKS, tokenId: punk, quantity: 1n, contractType: null };
  const records = [sale(log, nft, seller, buyer, { marketplace: "cryptopunks", currency: null, amount })];
  // The punk's transfer sits at the contract's Transfer log (or, without one, beside the sale).
  const at = transfer ?? log;
  records.unshift(transferRecord(at, null, seller, buyer, punk, 1n, transfer ? 0 : 1));
  return records;
}

export const cryptopunks: Venue = {
  marketplace: "cryptopunks",
  addresses: [CRYPTOPUNKS],
  topics: [ASSIGN, PUNK_TRANSFER, PUNK_BOUGHT],
  needsTransaction: (topic) => topic === PUNK_BOUGHT,
  decode(log, tx) {
    if (log.address.toLowerCase() !== CRYPTOPUNKS) return undefined;
    const topic = topic0(log);
    if (topic === PUNK_BOUGHT) return bought(log, tx);
    if (topic === ASSIGN && log.topics.length === 2) {
      return [transferRecord(log, null, ZERO_ADDRESS, topicAddress(log.topics[1]!), wordBig(log.data, 0), 1n)];
    }
    if (topic === PUNK_TRANSFER && log.topics.length === 3) {
      const [from, to] = [topicAddress(log.topics[1]!), topicAddress(log.topics[2]!)];
      return [transferRecord(log, null, from, to, wordBig(log.data, 0), 1n)];
    }
    return undefined;
  },
};
