/**
 * The own index against contracts deployed on anvil (not hand-built logs): ERC-2309 batch mints of OpenZeppelin's
 * ERC721Consecutive, expanded to one record per token up to the cap and counted beyond it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { runNode } from "../../src/core/node.js";
import consecutiveArtifact from "../../src/demo/contracts/ConsecutiveMint.json" with { type: "json" };
import { type Address, type Artifact, type ChainConnection, call, connect, deploy } from "../../src/demo/contracts.js";
import { CONSECUTIVE_CAP } from "../../src/ingest/decode.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { nftTransactionsByContract } from "../../src/nodes/index.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, startAnvil } from "../support/index-helpers.js";

const consecutive = consecutiveArtifact as unknown as Artifact;
let anvil: Anvil;
let chain: ChainConnection;
let backend: IndexBackend;

beforeAll(async () => {
  anvil = await startAnvil();
  chain = await connect(anvil.rpcUrl);
  backend = await openBackend("contracts");
}, 60_000);

afterAll(async () => {
  closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

async function records(db: string, contract: Address): Promise<TransactionRecord[]> {
  const out = await runNode(
    nftTransactionsByContract,
    { query: { contract_address: contract, type: ["all"], page_size: 1000 }, params: {} },
    { config: loadConfig({ NFT_SOURCE: "index", INDEX_DB: db }) },
  );
  expect(out.error).toBeUndefined();
  return out.data!.transactions;
}

describe("ERC-2309 on OpenZeppelin's ERC721Consecutive", () => {
  it("a batch within the cap is one mint per token; a larger one is counted, and its tokens' later transfers kept", async () => {
    const [deployer, alice, bob, carol] = chain.accounts as [Address, Address, Address, Address];
    const start = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 })) + 1;
    // Three tokens (0..2) to alice, then one batch of more than the cap (3..) to bob.
    const big = CONSECUTIVE_CAP + 2000;
    const nft = await deploy(chain, deployer, "ConsecutiveMint", consecutive, [
      [alice, bob],
      [3, big],
    ]);
    await call(chain, alice, nft, consecutive, "transferFrom", [alice, carol, 1n]);
    await call(chain, bob, nft, consecutive, "transferFrom", [bob, carol, 5000n]);

    const db = await backend.target("consecutive");
    const result = await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, fromBlock: start });
    expect(result.unknownLogs).toBe(1);
    const got = (await records(db, nft)).map((r) => {
      const { type, token_id, quantity } = r as { type: string; token_id: string; quantity: number };
      const parties =
        type === "mint"
          ? [(r as { owner_address: string }).owner_address]
          : [(r as { transfer_from: string }).transfer_from, (r as { transfer_to: string }).transfer_to];
      return [type, token_id, quantity, ...parties];
    });
    // Newest first: the two transfers, then the small batch's mints in reverse order.
    expect(got).toEqual([
      ["transfer", "5000", 1, bob, carol],
      ["transfer", "1", 1, alice, carol],
      ["mint", "2", 1, alice],
      ["mint", "1", 1, alice],
      ["mint", "0", 1, alice],
    ]);
    expect(result.records).toBe(5);
  });
});
