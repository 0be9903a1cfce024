/**
 * The own index as a source (core/upstream-definition.ts says what a definition holds and who reads it). It sits
 * beside own-index/ rather than in it: that folder is reached through its face alone, and its face is left out of
 * the workflow packages (it brings the SQLite driver), while the list of sources loads everywhere.
 */
import { hostSetting } from "../core/upstream-definition.js";
import type { SourceDefinition } from "./definition.js";
import { NO_API_KEY } from "./types.js";

/** The own index's module, once a run has used it: what `close` has to close. */
let indexModule: Promise<typeof import("./own-index/index.js")> | undefined;

export const index: SourceDefinition = {
  id: "index",
  title: "Own index",
  description: "chainmail's own index of an Ethereum JSON-RPC node, in SQLite or PostgreSQL.",
  portable: false,
  help: ["the own index that `chainmail index` builds: INDEX_DB; no key"],
  variables: ["INDEX_DB", "INDEX_DATABASE_URL", "CHAINMAIL_SQLITE_DRIVER"],
  settings: [
    hostSetting({
      key: "database",
      env: "INDEX_DB",
      title: "Database",
      description: "An SQLite file path or a postgres:// URL.",
    }),
  ],
  // What the chain shows: transfers, mints, burns and sales; bids and listings come from OpenSea (index+opensea).
  capabilities: { orderBook: false },
  // The own index asks nobody for a key.
  operatorApiKey: () => NO_API_KEY,
  async open(config) {
    // Loaded on demand: the index brings a native SQLite driver that NFTPort and OpenSea users never need.
    indexModule ??= import("./own-index/index.js");
    return (await indexModule).indexSource(config);
  },
  async close() {
    if (indexModule) await (await indexModule).closeIndexSources();
  },
};
