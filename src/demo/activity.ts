/**
 * Creates NFT activity on a dev chain where `deployAll` ran, and returns a manifest of every record an index of
 * that chain must produce. The manifest is read back from the mined receipts' logs, so it is the chain's truth,
 * not what the script meant to do.
 *
 * Cast (anvil's dev accounts): deployer = accounts[0], alice = [1] (collector and seller), bob = [2] (buyer and
 * bidder), carol = [3], feeRecipient = [4] (the marketplace fee in every sale).
 */
import { decodeEventLog, formatUnits, type Hex, type Log, parseEther, parseUnits, type TransactionReceipt } from "viem";
import { ChainmailError } from "../core/errors.js";
import { type Address, artifacts, type ChainConnection, call, connect, type Deployed } from "./contracts.js";

const ZERO: Address = "0x0000000000000000000000000000000000000000";
const ZERO_KEY: Hex = `0x${"0".repeat(64)}`;
/** Seaport item types. */
const ItemType = { NATIVE: 0, ERC20: 1, ERC721: 2, ERC1155: 3 } as const;

/** An ERC-721 token id beyond 2^53 (2^60 + 1). */
export const BIG_ERC721_ID = 2n ** 60n + 1n;
/** An ERC-1155 token id beyond 2^64. */
export const BIG_ERC1155_ID = 2n ** 64n + 7n;
/** An ERC-1155 quantity that a float64 cannot hold (2^53 + 1). */
export const BIG_QUANTITY = 2n ** 53n + 1n;

interface RecordBase {
  contract: Address;
  /** Decimal string (uint256). */
  tokenId: string;
  /** Decimal string (uint256): 1 for ERC-721. */
  quantity: string;
  from: Address;
  to: Address;
  txHash: Hex;
  blockNumber: number;
  logIndex: number;
  /** Position in an ERC-1155 TransferBatch; 0 otherwise. */
  batchIndex: number;
}

export interface TransferRecord extends RecordBase {
  type: "mint" | "transfer" | "burn";
}

/** A Seaport fill. `from` = seller, `to` = buyer; `logIndex` is the OrderFulfilled log's. */
export interface SaleRecord extends RecordBase {
  type: "sale";
  /** Gross price in whole units of `currency` (listing: all currency consideration; bid: the offer), exact. */
  price: string;
  /** The same in the currency's smallest unit (wei). */
  priceRaw: string;
  currency: "ETH" | Address;
  buyer: Address;
  seller: Address;
  /** The demo's orders pay no OpenSea fee wallet and use no OpenSea zone: plain Seaport. */
  marketplace: "seaport";
  contractType: "ERC721" | "ERC1155";
  /** "listing" when the offerer sold the NFT, "bid" when the offerer paid for it. */
  side: "listing" | "bid";
}

export type ActivityRecord = TransferRecord | SaleRecord;

/** One `AnswerUpdated` of the price feed (8 decimals). */
export interface PriceUpdate {
  /** USD per ETH with 8 decimals, as the feed stores it (decimal string). */
  answer: string;
  roundId: string;
  /** Unix seconds. */
  updatedAt: number;
  txHash: Hex;
  blockNumber: number;
  logIndex: number;
}

export interface ActivityManifest {
  accounts: { deployer: Address; alice: Address; bob: Address; carol: Address; feeRecipient: Address };
  /** Every NFT record, in chain order (block, log, batch index). */
  records: ActivityRecord[];
  priceUpdates: PriceUpdate[];
  /** First and last block this activity touched. */
  blocks: [number, number];
}

interface OfferItem {
  itemType: number;
  token: Address;
  identifierOrCriteria: bigint;
  startAmount: bigint;
  endAmount: bigint;
}
interface ConsiderationItem extends OfferItem {
  recipient: Address;
}

/** Sends one call of a demo contract and keeps its receipt for the manifest. */
type Send = (
  from: Address,
  contract: keyof Deployed,
  fn: string,
  args: readonly unknown[],
  value?: bigint,
) => Promise<TransactionReceipt>;

interface Accounts {
  deployer: Address;
  alice: Address;
  bob: Address;
  carol: Address;
  feeRecipient: Address;
}

/** Runs the whole scripted activity (about 35 transactions) and returns its manifest. */
export async function createActivity(rpcUrl: string, deployed: Deployed): Promise<ActivityManifest> {
  const chain = await connect(rpcUrl);
  const [deployer, alice, bob, carol, feeRecipient] = chain.accounts as [Address, Address, Address, Address, Address];
  const accounts = { deployer, alice, bob, carol, feeRecipient };
  const receipts: TransactionReceipt[] = [];
  const send: Send = async (from, contract, fn, args, value) => {
    const receipt = await call(chain, from, deployed[contract], artifacts[contract], fn, args, value);
    receipts.push(receipt);
    return receipt;
  };
  const updatePrice = (usd: string) => send(deployer, "priceFeed", "updateAnswer", [parseUnits(usd, 8)]);

  await updatePrice("3000.12345678");
  await mintsTransfersAndBurns(send, accounts);
  await updatePrice("3100");
  await seaportTrades(send, deployed, accounts);
  await updatePrice("2999.87654321");

  const decimals = await currencyDecimals(chain, deployed.weth);
  const records = receipts.flatMap((receipt) => recordsOf(receipt.logs, deployed, decimals));
  records.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex || a.batchIndex - b.batchIndex);
  const blockNumbers = receipts.map((r) => Number(r.blockNumber));
  return {
    accounts,
    records,
    priceUpdates: receipts.flatMap((receipt) => priceUpdatesOf(receipt.logs, deployed)),
    blocks: [Math.min(...blockNumbers), Math.max(...blockNumbers)],
  };
}

async function mintsTransfersAndBurns(send: Send, { deployer, alice, bob, carol }: Accounts): Promise<void> {
  // ERC-721: mints, a transfer, a burn.
  for (const id of [1n, 2n, 3n, 4n, BIG_ERC721_ID]) await send(deployer, "erc721", "mint", [alice, id]);
  await send(alice, "erc721", "transferFrom", [alice, carol, 1n]);
  await send(alice, "erc721", "safeTransferFrom", [alice, carol, BIG_ERC721_ID]);
  await send(carol, "erc721", "burn", [1n]);

  // ERC-1155: single and batch mints (one id and one quantity beyond 2^53), a batch transfer, single and batch burns.
  await send(deployer, "erc1155", "mint", [alice, 1n, 10n]);
  await send(deployer, "erc1155", "mintBatch", [alice, [2n, BIG_ERC1155_ID], [5n, BIG_QUANTITY]]);
  await send(alice, "erc1155", "safeBatchTransferFrom", [alice, carol, [1n, BIG_ERC1155_ID], [3n, BIG_QUANTITY], "0x"]);
  await send(carol, "erc1155", "safeTransferFrom", [carol, bob, 1n, 1n, "0x"]);
  await send(carol, "erc1155", "burn", [carol, 1n, 1n]);
  await send(carol, "erc1155", "burnBatch", [carol, [1n, BIG_ERC1155_ID], [1n, 2n ** 52n]]);
}

async function seaportTrades(send: Send, deployed: Deployed, accounts: Accounts): Promise<void> {
  const { deployer, alice, bob, feeRecipient } = accounts;
  // Approvals, then pre-validated orders (validate() on-chain by the offerer: no signature needed).
  await send(alice, "erc721", "setApprovalForAll", [deployed.seaport, true]);
  await send(alice, "erc1155", "setApprovalForAll", [deployed.seaport, true]);
  await send(deployer, "weth", "mint", [bob, parseEther("1000")]);
  await send(bob, "weth", "approve", [deployed.seaport, parseEther("1000")]);
  await send(alice, "weth", "approve", [deployed.seaport, parseEther("1000")]); // pays the fee when accepting a bid

  let salt = 1n;
  const sell = (nft: OfferItem, currency: Address | "ETH", price: bigint, feeBps: bigint) =>
    fillListing(send, { seller: alice, buyer: bob, nft, currency, price, feeBps, feeRecipient, salt: salt++ });

  // A listing filled in ETH with a 2.5% fee, a listing filled in the ERC-20, an ERC-1155 sale of 4 units.
  await sell(item(ItemType.ERC721, deployed.erc721, 2n, 1n), "ETH", parseEther("1.5"), 250n);
  await sell(item(ItemType.ERC721, deployed.erc721, 3n, 1n), deployed.weth, parseEther("250"), 250n);
  await sell(item(ItemType.ERC1155, deployed.erc1155, 2n, 4n), "ETH", parseEther("0.3"), 100n);

  // A bid: bob offers 100.5 WETH for token 4 (fee from the offer), alice accepts it.
  const bidAmount = parseEther("100.5");
  const bid = seaportOrder(
    bob,
    [item(ItemType.ERC20, deployed.weth, 0n, bidAmount)],
    [
      { ...item(ItemType.ERC721, deployed.erc721, 4n, 1n), recipient: bob },
      { ...item(ItemType.ERC20, deployed.weth, 0n, (bidAmount * 250n) / 10_000n), recipient: feeRecipient },
    ],
    salt++,
  );
  await send(bob, "seaport", "validate", [[bid]]);
  await send(alice, "seaport", "fulfillOrder", [bid, ZERO_KEY]);
}

/**
 * Emits `events` ERC-721 mint Transfer logs from the BulkMinter (10,000 per transaction, one block each with
 * automine), for ingestion benchmarks. Token ids start at (next block) << 64, so repeated calls never collide.
 */
export async function createBulkActivity(
  rpcUrl: string,
  deployed: Deployed,
  events: number,
  perTransaction = 10_000,
): Promise<{ events: number; blocks: [number, number] }> {
  if (!Number.isInteger(events) || events < 1) throw new ChainmailError("INTERNAL", "events must be an integer >= 1");
  const chain = await connect(rpcUrl);
  const [from, to] = chain.accounts as [Address, Address];
  let next = (BigInt(await chain.publicClient.getBlockNumber()) + 1n) << 64n;
  const blocks: number[] = [];
  for (let left = events; left > 0; ) {
    const count = Math.min(left, perTransaction);
    const receipt = await call(chain, from, deployed.bulkMinter, artifacts.bulkMinter, "mintRange", [
      to,
      next,
      BigInt(count),
    ]);
    blocks.push(Number(receipt.blockNumber));
    next += BigInt(count);
    left -= count;
  }
  return { events, blocks: [Math.min(...blocks), Math.max(...blocks)] };
}

interface Listing {
  seller: Address;
  buyer: Address;
  nft: OfferItem;
  currency: Address | "ETH";
  price: bigint;
  feeBps: bigint;
  feeRecipient: Address;
  salt: bigint;
}

/** A Seaport listing, pre-validated by the seller and filled by the buyer; resolves to the fill's receipt. */
async function fillListing(send: Send, listing: Listing): Promise<TransactionReceipt> {
  const { seller, buyer, currency, price } = listing;
  const fee = (price * listing.feeBps) / 10_000n;
  const pay = (amount: bigint, recipient: Address): ConsiderationItem =>
    currency === "ETH"
      ? { ...item(ItemType.NATIVE, ZERO, 0n, amount), recipient }
      : { ...item(ItemType.ERC20, currency, 0n, amount), recipient };
  const order = seaportOrder(
    seller,
    [listing.nft],
    [pay(price - fee, seller), pay(fee, listing.feeRecipient)],
    listing.salt,
  );
  await send(seller, "seaport", "validate", [[order]]);
  return send(buyer, "seaport", "fulfillOrder", [order, ZERO_KEY], currency === "ETH" ? price : undefined);
}

/**
 * One more sale after `createActivity`, for a watch to mail: bob lists ERC-721 #2 (bought in `createActivity`), or
 * another token minted to him first, and carol buys it for `price` ETH (default 2).
 */
export async function createLiveSale(
  rpcUrl: string,
  deployed: Deployed,
  options: { tokenId?: bigint; price?: string } = {},
): Promise<{ blockNumber: number; txHash: Hex }> {
  const chain = await connect(rpcUrl);
  const [deployer, , bob, carol, feeRecipient] = chain.accounts as [Address, Address, Address, Address, Address];
  const send: Send = (from, contract, fn, args, value) =>
    call(chain, from, deployed[contract], artifacts[contract], fn, args, value);
  const tokenId = options.tokenId ?? 2n;
  if (tokenId !== 2n) await send(deployer, "erc721", "mint", [bob, tokenId]);
  await send(bob, "erc721", "setApprovalForAll", [deployed.seaport, true]);
  const receipt = await fillListing(send, {
    seller: bob,
    buyer: carol,
    nft: item(ItemType.ERC721, deployed.erc721, tokenId, 1n),
    currency: "ETH",
    price: parseEther(options.price ?? "2"),
    feeBps: 250n,
    feeRecipient,
    salt: BigInt(Date.now()),
  });
  return { blockNumber: Number(receipt.blockNumber), txHash: receipt.transactionHash };
}

function item(itemType: number, token: Address, identifierOrCriteria: bigint, amount: bigint): OfferItem {
  return { itemType, token, identifierOrCriteria, startAmount: amount, endAmount: amount };
}

function seaportOrder(offerer: Address, offer: OfferItem[], consideration: ConsiderationItem[], salt: bigint) {
  return {
    parameters: {
      offerer,
      zone: ZERO,
      offer,
      consideration,
      orderType: 0, // FULL_OPEN
      startTime: 0n,
      endTime: 2n ** 64n,
      zoneHash: ZERO_KEY,
      salt,
      conduitKey: ZERO_KEY, // approvals go to Seaport itself
      totalOriginalConsiderationItems: BigInt(consideration.length),
    },
    signature: "0x" as Hex, // pre-validated on-chain
  };
}

async function currencyDecimals(chain: ChainConnection, erc20: Address): Promise<Record<string, number>> {
  const decimals = await chain.publicClient.readContract({
    address: erc20,
    abi: artifacts.weth.abi,
    functionName: "decimals",
  });
  return { ETH: 18, [erc20]: Number(decimals) };
}

const lower = (address: string) => address.toLowerCase() as Address;

type AnyLog = Log<bigint, number, false>;

function decode(artifact: { abi: readonly unknown[] }, log: AnyLog) {
  try {
    return decodeEventLog({
      abi: artifact.abi as never,
      data: log.data,
      topics: log.topics as never,
      strict: true,
    }) as {
      eventName: string;
      args: Record<string, any>;
    };
  } catch {
    return undefined; // an event this reader does not need (Approval, OrderValidated, ...)
  }
}

/** The NFT records of one transaction's logs: transfers, mints and burns of both standards, and Seaport sales. */
function recordsOf(logs: readonly AnyLog[], deployed: Deployed, decimals: Record<string, number>) {
  const records: ActivityRecord[] = [];
  for (const log of logs) {
    const address = lower(log.address);
    const at = { txHash: log.transactionHash, blockNumber: Number(log.blockNumber), logIndex: log.logIndex };
    const transfer = (from: string, to: string, tokenId: bigint, quantity: bigint, batchIndex = 0) => {
      const type = lower(from) === ZERO ? "mint" : lower(to) === ZERO ? "burn" : "transfer";
      records.push({
        type,
        contract: address,
        tokenId: tokenId.toString(),
        quantity: quantity.toString(),
        from: lower(from),
        to: lower(to),
        ...at,
        batchIndex,
      });
    };
    if (address === deployed.erc721 || address === deployed.bulkMinter) {
      const event = log.topics.length === 4 ? decode(artifacts.erc721, log) : undefined;
      if (event?.eventName === "Transfer") transfer(event.args.from, event.args.to, event.args.tokenId, 1n);
    } else if (address === deployed.erc1155) {
      const event = decode(artifacts.erc1155, log);
      if (event?.eventName === "TransferSingle") {
        transfer(event.args.from, event.args.to, event.args.id, event.args.value);
      } else if (event?.eventName === "TransferBatch") {
        const { from, to, ids, values } = event.args as { from: string; to: string; ids: bigint[]; values: bigint[] };
        ids.forEach((id, i) => {
          transfer(from, to, id, values[i]!, i);
        });
      }
    } else if (address === deployed.seaport) {
      const event = decode(artifacts.seaport, log);
      if (event?.eventName === "OrderFulfilled") {
        const sale = saleOf(event.args as OrderFulfilled, decimals);
        if (sale) records.push({ ...sale, ...at, batchIndex: 0 });
      }
    }
  }
  return records;
}

interface OrderFulfilled {
  offerer: Address;
  recipient: Address;
  offer: { itemType: number; token: Address; identifier: bigint; amount: bigint }[];
  consideration: { itemType: number; token: Address; identifier: bigint; amount: bigint; recipient: Address }[];
}

/** Reservoir's basic-sale rule: one NFT against one currency; listing price = all consideration, bid = offer. */
function saleOf(event: OrderFulfilled, decimals: Record<string, number>) {
  const isNft = (i: { itemType: number }) => i.itemType === ItemType.ERC721 || i.itemType === ItemType.ERC1155;
  const currencyOf = (i: { itemType: number; token: Address }): "ETH" | Address =>
    i.itemType === ItemType.NATIVE ? "ETH" : lower(i.token);
  const [first] = event.offer;
  if (event.offer.length !== 1 || !first) return undefined;
  const listing = isNft(first);
  const nft = listing ? first : event.consideration[0];
  if (!nft || !isNft(nft)) return undefined;
  const payments = listing ? event.consideration : event.offer;
  const currency = currencyOf(listing ? payments[0]! : first);
  const paid = payments.filter((i) => !isNft(i));
  if (paid.some((i) => currencyOf(i) !== currency)) return undefined;
  const priceRaw = paid.reduce((sum, i) => sum + i.amount, 0n);
  const seller = lower(listing ? event.offerer : event.recipient);
  const buyer = lower(listing ? event.recipient : event.offerer);
  const unitDecimals = decimals[currency];
  if (unitDecimals === undefined) throw new ChainmailError("INTERNAL", `No decimals known for ${currency}`);
  return {
    type: "sale" as const,
    contract: lower(nft.token),
    tokenId: nft.identifier.toString(),
    quantity: nft.amount.toString(),
    from: seller,
    to: buyer,
    price: formatUnits(priceRaw, unitDecimals),
    priceRaw: priceRaw.toString(),
    currency,
    buyer,
    seller,
    marketplace: "seaport" as const,
    contractType: nft.itemType === ItemType.ERC721 ? ("ERC721" as const) : ("ERC1155" as const),
    side: listing ? ("listing" as const) : ("bid" as const),
  };
}

function priceUpdatesOf(logs: readonly AnyLog[], deployed: Deployed): PriceUpdate[] {
  return logs.flatMap((log) => {
    if (lower(log.address) !== deployed.priceFeed) return [];
    const event = decode(artifacts.priceFeed, log);
    if (event?.eventName !== "AnswerUpdated") return [];
    return [
      {
        answer: String(event.args.current),
        roundId: String(event.args.roundId),
        updatedAt: Number(event.args.updatedAt),
        txHash: log.transactionHash,
        blockNumber: Number(log.blockNumber),
        logIndex: log.logIndex,
      },
    ];
  });
}
