/**
 * The chain the fault tests index (test/ingest/faults*.test.ts): the demo's marketplace activity (sales in ETH and
 * WETH, transfers, burns, ERC-1155 batches, the ETH/USD feed) and 8,000 ERC-721 mints, 200 a block: some 60 blocks,
 * all near the head, with answers long enough to be cut. Its baseline is the index built straight from anvil.
 */
import { createActivity, createBulkActivity } from "../../src/demo/activity.js";
import { type Deployed, deployAll } from "../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../src/demo/devchain.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { type ActivityRow, IndexStore } from "../../src/sources/own-index/store.js";

export interface FaultChain {
  anvil: DevChain;
  deployed: Deployed;
  /** Every row of the index built straight from anvil, in chain order. */
  baseline: ActivityRow[];
  head: number;
  /** indexChain options for the demo's exchange, WETH and feed. */
  options: { seaport: string[]; ethTokens: string[]; priceFeed: string };
  /** The same as `chainmail index` flags. */
  flags: string[];
}

/** Retries and pauses short enough for a test, as a user could set them. */
export const FAST_RETRIES = {
  CHAINMAIL_RETRY_BASE_MS: "20",
  CHAINMAIL_RETRY_MAX_DELAY_MS: "300",
  CHAINMAIL_MAX_RETRIES: "8",
  INDEX_RPC_THROTTLE_BUDGET_MS: "60000",
  INDEX_RPC_LAG_BUDGET_MS: "60000",
};

export async function buildFaultChain(baselineDb: string): Promise<FaultChain> {
  const anvil = await startAnvil();
  const deployed = await deployAll(anvil.rpcUrl);
  await createActivity(anvil.rpcUrl, deployed);
  await createBulkActivity(anvil.rpcUrl, deployed, 8_000, 200);
  const options = { seaport: [deployed.seaport], ethTokens: [deployed.weth], priceFeed: deployed.priceFeed };
  const result = await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: baselineDb, follow: false, ...options });
  return {
    anvil,
    deployed,
    baseline: await allRows(baselineDb),
    head: result.lastBlock,
    options,
    flags: ["--seaport", deployed.seaport, "--eth-tokens", deployed.weth, "--price-feed", deployed.priceFeed],
  };
}

/** Every row of an index, in chain order. */
export async function allRows(db: string): Promise<ActivityRow[]> {
  const store = await IndexStore.open(db);
  try {
    return await store.page({ direction: "asc", limit: 1_000_000 });
  } finally {
    await store.close();
  }
}
