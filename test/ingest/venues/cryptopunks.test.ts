/**
 * CryptoPunks on anvil: Larva Labs' own market contract (built by scripts/compile-cryptopunks.ts from their
 * published source), placed at its mainnet address 0xb47e…3bbb (test/support/place-contract.ts), driven through its own
 * functions: initial assignment, a transfer, a listing bought, and bids accepted — where the contract logs
 * `PunkBought` with price 0 and buyer 0x0 (it clears the bid before logging it). `chainmail index` reads the logs
 * back; every field of every record is compared with what the calls did, read from their receipts and blocks.
 * The last block decodes laid-out logs: a purchase, an accepted bid repaired from `acceptBidForPunk`, a PunkTransfer.
 */
import { type Abi, formatUnits, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Address, type Artifact, type ChainConnection, call, connect } from "../../../src/demo/contracts.js";
import { TOPIC } from "../../../src/ingest/decode.js";
import { CRYPTOPUNKS } from "../../../src/ingest/venues/cryptopunks.js";
import type { TransactionRecord } from "../../../src/schemas/transactions.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import market from "../../fixtures/cryptopunks/CryptoPunksMarket.json" with { type: "json" };
import { runCli, warningsOf } from "../../support/helpers.js";
import { type IndexBackend, openBackend, recordsInIndex } from "../../support/index-backend.js";
import { type Anvil, address, startAnvil, topic, word } from "../../support/index-helpers.js";
import { placeContract } from "../../support/place-contract.js";
import { BUYER, decodeLast, log, SELLER, saleView } from "../../support/venue-logs.js";

const punks: Artifact = { abi: market.abi as Abi, bytecode: market.bytecode as Hex };
const PUNKS = CRYPTOPUNKS as Address;
const ETH = 10n ** 18n;
const ZERO = "0x0000000000000000000000000000000000000000";

let anvil: Anvil;
let chain: ChainConnection;
let backend: IndexBackend;
let db: string;
/** The records the calls must come out as, oldest first, built from their receipts. */
const sales: TransactionRecord[] = [];
const transfers: TransactionRecord[] = [];
/** The acceptBidForPunk transaction and the bid it filled: the log says 0 and 0x0. */
let accepted: { txHash: Hex; bid: bigint };

async function header(txHash: Hex) {
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: txHash });
  const block = await chain.publicClient.getBlock({ blockHash: receipt.blockHash });
  return {
    receipt,
    fields: {
      transaction_hash: txHash,
      block_hash: block.hash,
      block_number: Number(block.number),
      transaction_date: new Date(Number(block.timestamp) * 1000).toISOString().slice(0, 19),
    },
  };
}

beforeAll(async () => {
  anvil = await startAnvil();
  backend = await openBackend("cryptopunks");
  db = await backend.target("cryptopunks");
  chain = await connect(anvil.rpcUrl);
  const [owner, seller, buyer, other] = chain.accounts as [Address, Address, Address, Address];

  const hash = await chain.walletClient.deployContract({
    account: owner,
    chain: chain.walletClient.chain,
    abi: punks.abi,
    bytecode: punks.bytecode,
  });
  const deployed = (await chain.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
  await placeContract(anvil, deployed, PUNKS, [hash]);

  const send = (from: Address, fn: string, args: unknown[], value?: bigint) =>
    call(chain, from, PUNKS, punks, fn, args, value);
  const mint = async (to: Address, punk: bigint) => {
    const r = await send(owner, "setInitialOwner", [to, punk]);
    const { fields } = await header(r.transactionHash);
    transfers.push({
      type: "mint",
      owner_address: to,
      contract_address: PUNKS,
      token_id: punk.toString(),
      quantity: 1,
      ...fields,
    } as TransactionRecord);
  };
  /** The punk's own transfer record and, when `price` is given, the sale beside it. */
  const moved = async (txHash: Hex, punk: bigint, from: Address, to: Address, price?: bigint) => {
    const { fields } = await header(txHash);
    transfers.push({
      type: "transfer",
      transfer_from: from,
      transfer_to: to,
      contract_address: PUNKS,
      token_id: punk.toString(),
      quantity: 1,
      ...fields,
    } as TransactionRecord);
    if (price === undefined) return;
    sales.push({
      type: "sale",
      buyer_address: to,
      seller_address: from,
      // CryptoPunks predates ERC-721: no contract_type, as NFTPort's records.
      nft: { contract_address: PUNKS, token_id: punk.toString() },
      quantity: 1,
      price_details: { asset_type: "ETH", price: Number(formatUnits(price, 18)), price_usd: null },
      ...fields,
      marketplace: "cryptopunks",
    } as TransactionRecord);
  };

  for (const punk of [7804n, 9354n, 6161n]) await mint(seller, punk);
  await send(owner, "allInitialOwnersAssigned", []);

  // A listing bought: PunkBought carries the price and the buyer.
  await send(seller, "offerPunkForSale", [7804n, 42n * ETH]);
  const bought = await send(buyer, "buyPunk", [7804n], 42n * ETH);
  await moved(bought.transactionHash, 7804n, seller, buyer, 42n * ETH);

  // A bid accepted: the log says price 0 and buyer 0x0; the record has the bidder and the accepted price.
  await send(buyer, "enterBidForPunk", [9354n], (3n * ETH) / 10n);
  const acceptance = await send(seller, "acceptBidForPunk", [9354n, (3n * ETH) / 10n]);
  accepted = { txHash: acceptance.transactionHash, bid: (3n * ETH) / 10n };
  await moved(acceptance.transactionHash, 9354n, seller, buyer, (3n * ETH) / 10n);

  // A seller who accepts with a lower minPrice than the bid: the record holds that minPrice, a lower bound of the
  // 67.500000000000100001 ETH paid (README: no log of the transaction states the bid).
  await send(buyer, "enterBidForPunk", [6161n], 67_500_000_000_000_100_001n);
  const below = await send(seller, "acceptBidForPunk", [6161n, 60n * ETH]);
  await moved(below.transactionHash, 6161n, seller, buyer, 60n * ETH);

  // A gift: PunkTransfer, a transfer record and no sale.
  const gift = await send(buyer, "transferPunk", [other, 7804n]);
  await moved(gift.transactionHash, 7804n, buyer, other);

  const out = await runCli(["index", "--rpc", anvil.rpcUrl, "--db", db, "--from-block", "0", "--once"], {
    env: { INDEX_RPC_MAX_RETRIES: "0" },
  });
  expect(warningsOf(out.stderr)).toBe("");
  expect(out.code).toBe(0);
}, 120_000);

afterAll(async () => {
  closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

const onChain = (types: string[]) => recordsInIndex(db, types);

describe("CryptoPunks on anvil through chainmail index", () => {
  it("the contract really logs an accepted bid with price 0 and buyer 0x0", async () => {
    const { receipt } = await header(accepted.txHash);
    const log = receipt.logs.find(
      (l) => l.topics[0] === "0x58e5d5a525e3b40bc15abaa38b5882678db1ee68befd2f60bafe3a7fd06db9e3",
    )!;
    expect(log.address.toLowerCase()).toBe(PUNKS);
    expect(BigInt(log.data)).toBe(0n);
    expect(log.topics[3]).toBe(`0x${ZERO.slice(2).padStart(64, "0")}`);
  });

  it("every purchase and accepted bid is its sale, field for field, the bug repaired", async () => {
    expect(sales.length).toBe(3);
    expect(await onChain(["sale"])).toEqual(sales);
  });

  it("assignments are mints, purchases and gifts are transfers, in chain order", async () => {
    expect(transfers.map((t) => t.type)).toEqual([
      "mint",
      "mint",
      "mint",
      "transfer",
      "transfer",
      "transfer",
      "transfer",
    ]);
    expect(await onChain(["mint", "transfer", "burn"])).toEqual(transfers);
  });
});

/** CryptoPunks' decoder on logs laid out as the market emits them. */
const TOPICS = {
  punkBought: "0x58e5d5a525e3b40bc15abaa38b5882678db1ee68befd2f60bafe3a7fd06db9e3",
  punkTransfer: "0x05af636b70da6819000c49f85b21fa82081c632069bb626f30932034099107d8",
};

describe("CryptoPunks", () => {
  const punkTransfer3 = (from: string, to: string) =>
    log(CRYPTOPUNKS, [TOPIC.transfer, topic(from), topic(to)], word(1));
  const bought = (punk: number, value: bigint, from: string, to: string) =>
    log(CRYPTOPUNKS, [TOPICS.punkBought, topic(punk), topic(from), topic(to)], word(value));

  it("a purchase: a sale without contract type, and the punk's transfer at the contract's Transfer log", () => {
    const logs = [punkTransfer3(SELLER, BUYER), bought(7804, 4200n * ETH, SELLER, BUYER)];
    const records = decodeLast(logs)!;
    expect(saleView(records)).toEqual([
      {
        kind: "transfer",
        contract: CRYPTOPUNKS,
        tokenId: "7804",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: null,
      },
      {
        kind: "sale",
        contract: CRYPTOPUNKS,
        tokenId: "7804",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: null,
        marketplace: "cryptopunks",
        currency: null,
        amount: 4200n * ETH,
      },
    ]);
    expect(records[0]!.logIndex).toBe(Number(logs[0]!.logIndex));
  });

  it("an accepted bid (logged with price 0 and buyer 0x0): buyer from the Transfer, price from acceptBidForPunk", () => {
    const logs = [punkTransfer3(SELLER, BUYER), bought(9354, 0n, SELLER, address(0))];
    const call = `0x23165b75${word(9354)}${word(3n * 10n ** 17n)}`;
    const tx = { from: SELLER, to: CRYPTOPUNKS, input: call, value: "0x0" };
    expect(saleView(decodeLast(logs, tx))?.[1]).toMatchObject({
      seller: SELLER,
      buyer: BUYER,
      amount: 3n * 10n ** 17n,
    });
    // Through another contract the call is not readable: the price stays unknown, the buyer is still repaired.
    const viaContract = { ...tx, to: address(0xc0de), input: "0x12345678" };
    expect(saleView(decodeLast(logs, viaContract))?.[1]).toMatchObject({ buyer: BUYER, amount: null });
  });

  it("a PunkTransfer is a transfer record", () => {
    const transfer = log(CRYPTOPUNKS, [TOPICS.punkTransfer, topic(SELLER), topic(BUYER)], word(42));
    expect(saleView(decodeLast([transfer]))).toEqual([
      {
        kind: "transfer",
        contract: CRYPTOPUNKS,
        tokenId: "42",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: null,
      },
    ]);
  });
});
