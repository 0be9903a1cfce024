/**
 * A small chain on anvil holding every record kind the index knows, plus logs it must ignore, and the NFTPort
 * records it must produce — built from the transactions' receipts and block headers, not from the indexer.
 */
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import {
  type Anvil,
  address,
  answerUpdated,
  type EmitResult,
  erc20Transfer,
  erc721Transfer,
  installEmitters,
  orderFulfilled,
  transferBatch,
  transferSingle,
} from "./index-helpers.js";

export const NFT721 = address(0x721);
export const NFT1155 = address(0x1155);
export const SEAPORT = address(0x5ea);
export const OTHER_EXCHANGE = address(0xbad);
export const WETH = address(0xe7);
export const TOKEN20 = address(0x20);
export const FEED = address(0xfeed);
export const ALICE = address(0xa11ce);
export const BOB = address(0xb0b);
export const CAROL = address(0xca401);
export const FEES = address(0xfee);
/** One of OpenSea's fee wallets: a fill paying it is attributed to `opensea`, any other Seaport fill to `seaport`. */
export const OPENSEA_FEES = "0x0000a26b00c1f0df003000390027140000faa719";
export const ZERO = address(0);
/** A token id of 78 digits and a quantity beyond 2^53. */
export const HUGE_ID = 2n ** 255n + 7n;
export const HUGE_QTY = 2n ** 64n + 1n;
const ETH = 10n ** 18n;

export interface ChainFixture {
  /** Every record the index must hold, in chain order (oldest first). */
  expected: TransactionRecord[];
  /** indexChain options that match the fixture's addresses. */
  options: { seaport: string[]; ethTokens: string[]; priceFeed: string };
  head: number;
}

export async function buildChain(anvil: Anvil): Promise<ChainFixture> {
  await installEmitters(anvil, [NFT721, NFT1155, SEAPORT, OTHER_EXCHANGE, WETH, TOKEN20, FEED]);
  const expected: TransactionRecord[] = [];
  const headerOf = async (r: EmitResult) => {
    const block = await anvil.rpc<{ hash: string; timestamp: string }>("eth_getBlockByNumber", [
      `0x${r.blockNumber.toString(16)}`,
      false,
    ]);
    return {
      transaction_hash: r.txHash,
      block_hash: block.hash,
      block_number: r.blockNumber,
      transaction_date: new Date(Number(block.timestamp) * 1000).toISOString().slice(0, 19),
    };
  };
  const shapeA = async (
    r: EmitResult,
    type: "mint" | "transfer" | "burn",
    contract: string,
    tokenId: bigint,
    quantity: number | bigint,
    from: string,
    to: string,
  ) => {
    const parties =
      type === "mint"
        ? { owner_address: to }
        : type === "burn"
          ? { owner_address: from }
          : { transfer_from: from, transfer_to: to };
    expected.push({
      type,
      ...parties,
      contract_address: contract,
      token_id: tokenId.toString(),
      quantity,
      ...(await headerOf(r)),
    } as TransactionRecord);
  };
  const sale = async (
    r: EmitResult,
    nft: { type: "ERC721" | "ERC1155"; contract: string; id: bigint },
    quantity: number,
    buyer: string,
    seller: string,
    price: Record<string, unknown>,
    marketplace = "seaport",
  ) => {
    const { transaction_hash, block_hash, block_number, transaction_date } = await headerOf(r);
    expected.push({
      type: "sale",
      buyer_address: buyer,
      seller_address: seller,
      nft: { contract_type: nft.type, contract_address: nft.contract, token_id: nft.id.toString() },
      quantity,
      price_details: price,
      transaction_hash,
      block_hash,
      block_number,
      transaction_date,
      marketplace,
    } as TransactionRecord);
  };

  await shapeA(await erc721Transfer(anvil, NFT721, ZERO, ALICE, 1), "mint", NFT721, 1n, 1, ZERO, ALICE);
  await shapeA(await erc721Transfer(anvil, NFT721, ZERO, ALICE, 2), "mint", NFT721, 2n, 1, ZERO, ALICE);
  await erc20Transfer(anvil, TOKEN20, ALICE, BOB, 5n * ETH); // three topics: ERC-20, not an NFT
  await shapeA(await erc721Transfer(anvil, NFT721, ALICE, BOB, 1), "transfer", NFT721, 1n, 1, ALICE, BOB);
  // Listing filled for 1 ETH gross (0.975 to the seller + 0.025 to OpenSea's fee wallet), before the feed has any
  // answer.
  await sale(
    await orderFulfilled(
      anvil,
      SEAPORT,
      ALICE,
      BOB,
      [{ itemType: 2, token: NFT721, identifier: 2, amount: 1 }],
      [
        { itemType: 0, token: ZERO, identifier: 0, amount: 975n * 10n ** 15n, recipient: ALICE },
        { itemType: 0, token: ZERO, identifier: 0, amount: 25n * 10n ** 15n, recipient: OPENSEA_FEES },
      ],
    ),
    { type: "ERC721", contract: NFT721, id: 2n },
    1,
    BOB,
    ALICE,
    { asset_type: "ETH", price: 1, price_usd: null },
    "opensea",
  );
  await shapeA(await erc721Transfer(anvil, NFT721, ALICE, BOB, 2), "transfer", NFT721, 2n, 1, ALICE, BOB);
  await answerUpdated(anvil, FEED, 300012345678n, 1); // $3000.12345678 with 8 decimals
  await shapeA(
    await transferSingle(anvil, NFT1155, ZERO, CAROL, HUGE_ID, HUGE_QTY),
    "mint",
    NFT1155,
    HUGE_ID,
    HUGE_QTY,
    ZERO,
    CAROL,
  );
  const batch = await transferBatch(anvil, NFT1155, CAROL, BOB, [1, 2, 3], [10, 20, 30]);
  for (const [id, qty] of [
    [1n, 10],
    [2n, 20],
    [3n, 30],
  ] as const) {
    await shapeA(batch, "transfer", NFT1155, id, qty, CAROL, BOB);
  }
  // Bid filled: Bob offered 0.5 WETH for five of token 2; Carol (the recipient) sold.
  await sale(
    await orderFulfilled(
      anvil,
      SEAPORT,
      BOB,
      CAROL,
      [{ itemType: 1, token: WETH, identifier: 0, amount: ETH / 2n }],
      [
        { itemType: 3, token: NFT1155, identifier: 2, amount: 5, recipient: BOB },
        { itemType: 1, token: WETH, identifier: 0, amount: 125n * 10n ** 14n, recipient: FEES },
      ],
    ),
    { type: "ERC1155", contract: NFT1155, id: 2n },
    5,
    BOB,
    CAROL,
    { asset_type: "ERC20", contract_address: WETH, price: 0.5, price_usd: 1500.06172839 },
  );
  // Listing paid in an ERC-20 that is not ETH-like: exact price, no USD value.
  await sale(
    await orderFulfilled(
      anvil,
      SEAPORT,
      BOB,
      ALICE,
      [{ itemType: 2, token: NFT721, identifier: 1, amount: 1 }],
      [{ itemType: 1, token: TOKEN20, identifier: 0, amount: 25n * 10n ** 17n + 1n, recipient: BOB }],
    ),
    { type: "ERC721", contract: NFT721, id: 1n },
    1,
    ALICE,
    BOB,
    // 2.500000000000000001 exactly in the store; the JSON number keeps what a double holds.
    { asset_type: "ERC20", contract_address: TOKEN20, price: 2.5, price_usd: null },
  );
  // Not Seaport, and a bundle: neither is a sale.
  await orderFulfilled(
    anvil,
    OTHER_EXCHANGE,
    ALICE,
    BOB,
    [{ itemType: 2, token: NFT721, identifier: 1, amount: 1 }],
    [{ itemType: 0, token: ZERO, identifier: 0, amount: ETH, recipient: ALICE }],
  );
  await orderFulfilled(
    anvil,
    SEAPORT,
    ALICE,
    BOB,
    [
      { itemType: 2, token: NFT721, identifier: 1, amount: 1 },
      { itemType: 2, token: NFT721, identifier: 2, amount: 1 },
    ],
    [{ itemType: 0, token: ZERO, identifier: 0, amount: ETH, recipient: ALICE }],
  );
  await shapeA(await erc721Transfer(anvil, NFT721, ALICE, ZERO, 1), "burn", NFT721, 1n, 1, ALICE, ZERO);
  const last = await transferSingle(anvil, NFT1155, BOB, ZERO, 1, 10);
  await shapeA(last, "burn", NFT1155, 1n, 10, BOB, ZERO);
  return {
    expected,
    options: { seaport: [SEAPORT], ethTokens: [WETH], priceFeed: FEED },
    head: last.blockNumber,
  };
}
