/**
 * A chainmail service with NFT_SOURCE=index+opensea, as a workflow package reaches it (the `service` source): a real
 * SQLite index holding one BAYC transfer, newer than every event of the local OpenSea server, and that server for
 * bids and listings.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../../src/server/index.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { testConfig } from "../support/helpers.js";
import { OPENSEA_KEY } from "../upstreams/opensea.js";
import { BAYC } from "../upstreams/opensea-data.js";

export interface IndexWithOpenSea {
  url: string;
  token: string;
  /** The index's one transfer: the newest record of BAYC. */
  newestTransfer: string;
  close(): Promise<void>;
}

/** A second after the local OpenSea server's newest BAYC event (an offer at 1764868312). */
const NEWEST = 1_764_868_400;

export async function startIndexWithOpenSea(openseaUrl: string): Promise<IndexWithOpenSea> {
  const dir = mkdtempSync(join(tmpdir(), "chainmail-index-opensea-"));
  const db = join(dir, "index.sqlite");
  const newestTransfer = `0x${"7e".repeat(32)}`;
  const store = await IndexStore.open(db);
  await store.insertRows([
    {
      block_number: 23_900_700,
      log_index: 0,
      batch_index: 0,
      kind: "transfer",
      contract: BAYC,
      token_id: "100",
      from_addr: "0xa72d8cc52674801eccc7a450ce26d393df726e40",
      to_addr: "0x9f791f7ad998be00455bae3dc17c97dab098442e",
      quantity: "1",
      tx_hash: newestTransfer,
      block_hash: `0x${"b1".repeat(32)}`,
      timestamp: NEWEST,
      contract_type: "ERC721",
      marketplace: null,
      currency: null,
      price: null,
      price_usd: null,
    },
  ]);
  await store.close();
  const token = "index-opensea-service-token-0123456789";
  const server = await startServer({
    port: 0,
    config: testConfig({
      NFT_SOURCE: "index+opensea",
      INDEX_DB: db,
      OPENSEA_BASE_URL: openseaUrl,
      OPENSEA_API_KEY: OPENSEA_KEY,
    }),
    tokens: [token],
  });
  return {
    url: server.url,
    token,
    newestTransfer,
    async close() {
      await server.close();
      await closeIndexSources();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
