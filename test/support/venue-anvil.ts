/**
 * Shared by the tests that run a venue's real contracts on anvil (index-zora, index-superrare, index-rarible,
 * index-foundation, index-seaport-venues): deploying a contract and moving it to the mainnet address the decoder
 * trusts, indexing the chain with `chainmail index`, and the sale record a trade must come out as, built from what
 * the test did and the receipt and block it landed in (never from the index).
 */
import { type Abi, formatUnits, type Hex } from "viem";
import { expect } from "vitest";
import type { Address, Artifact, ChainConnection } from "../../src/demo/contracts.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { runCli } from "./helpers.js";
import type { Anvil } from "./index-helpers.js";
import { placeContract } from "./place-contract.js";

export const ETH = 10n ** 18n;
export const ZERO = "0x0000000000000000000000000000000000000000" as Address;
/** Mainnet WETH: the address venues name for ETH-priced trades, and an ETH-like token for the index. */
export const MAINNET_WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2" as Address;

/** A committed artifact JSON ({ abi, bytecode, … }) as the demo's deploy helpers take it. */
export const artifactOf = (json: { abi: unknown; bytecode: string }): Artifact => ({
  abi: json.abi as Abi,
  bytecode: json.bytecode as Hex,
});

/** Deploys `artifact` and returns its address and the deployment's transaction. */
export async function deployWithHash(
  chain: ChainConnection,
  from: Address,
  artifact: Artifact,
  args: readonly unknown[] = [],
): Promise<{ address: Address; hash: Hex }> {
  const hash = await chain.walletClient.deployContract({
    account: from,
    chain: chain.walletClient.chain,
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    args,
  } as never);
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deploying at ${hash} failed`);
  return { address: receipt.contractAddress.toLowerCase() as Address, hash };
}

/** Deploys `artifact` and puts it (code and the storage its constructor wrote) at `at`, a mainnet address. */
export async function deployAt(
  anvil: Anvil,
  chain: ChainConnection,
  from: Address,
  artifact: Artifact,
  args: readonly unknown[],
  at: string,
): Promise<Address> {
  const { address, hash } = await deployWithHash(chain, from, artifact, args);
  await placeContract(anvil, address, at, [hash]);
  return at.toLowerCase() as Address;
}

/** `chainmail index` over the whole dev chain, once; its summary line. */
export async function indexDevChain(rpcUrl: string, db: string, extraArgs: readonly string[] = []) {
  const out = await runCli(["index", "--rpc", rpcUrl, "--db", db, "--from-block", "0", "--once", ...extraArgs], {
    env: { INDEX_RPC_MAX_RETRIES: "0" },
  });
  expect(out.stderr).toBe("");
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout) as { last_block: number; records: number; unknown_logs: number };
}

/** One sale a test made happen. `currency`: undefined = ETH. */
export interface Trade {
  txHash: Hex;
  seller: Address;
  buyer: Address;
  contract: Address;
  tokenId: bigint;
  quantity?: bigint;
  contractType: string | null;
  currency?: Address;
  price: bigint;
  marketplace: string;
}

/** The record `trade` must come out as (NFTPort's shape), its block read from the chain. */
export async function expectedSale(chain: ChainConnection, trade: Trade): Promise<TransactionRecord> {
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: trade.txHash });
  const block = await chain.publicClient.getBlock({ blockHash: receipt.blockHash });
  return {
    type: "sale",
    buyer_address: trade.buyer,
    seller_address: trade.seller,
    nft: {
      ...(trade.contractType ? { contract_type: trade.contractType } : {}),
      contract_address: trade.contract,
      token_id: trade.tokenId.toString(),
    },
    quantity: Number(trade.quantity ?? 1n),
    price_details: trade.currency
      ? {
          asset_type: "ERC20",
          contract_address: trade.currency,
          price: Number(formatUnits(trade.price, 18)),
          price_usd: null,
        }
      : { asset_type: "ETH", price: Number(formatUnits(trade.price, 18)), price_usd: null },
    transaction_hash: trade.txHash,
    block_hash: block.hash,
    block_number: Number(block.number),
    transaction_date: new Date(Number(block.timestamp) * 1000).toISOString().slice(0, 19),
    marketplace: trade.marketplace,
  } as TransactionRecord;
}

/** The topics the contract at `address` logged in the trades' transactions. */
export async function topicsLoggedBy(chain: ChainConnection, address: string, trades: readonly Trade[]) {
  const topics = new Set<string>();
  for (const trade of trades) {
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: trade.txHash });
    for (const log of receipt.logs) if (log.address.toLowerCase() === address) topics.add(log.topics[0]!);
  }
  return [...topics].sort();
}

/** Advances anvil's clock (auctions end on time). */
export async function passTime(anvil: Anvil, seconds: number): Promise<void> {
  await anvil.rpc("evm_increaseTime", [seconds]);
  await anvil.rpc("evm_mine", []);
}
