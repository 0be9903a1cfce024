/**
 * chainmail-activity: polls every `interval` seconds, sends one message per new record (oldest first), and keeps
 * its cursor in a file of Node-RED's user folder, written after the messages are sent, so that a restart goes on
 * from where it was: each record once.
 */
import type { NodeAPI, NodeDef, RuntimeNode } from "../node-red.js";
import {
  type ActivityCursor,
  type ActivityTarget,
  activityDetails,
  configOf,
  cursorFile,
  detailsCache,
  type EnrichmentCache,
  errorStatus,
  everyInterval,
  guardedGet,
  listOf,
  PageError,
  parseRecordFilter,
  pollActivity,
  polledStatus,
  pollInterval,
  type RecordFilter,
  scrub,
  settingsOf,
  toErrorPayload,
  withExactStrings,
} from "../shared/index.js";

interface ActivityDef extends NodeDef {
  config?: string;
  kind?: string;
  contractAddress?: string;
  tokenId?: string;
  startBlock?: string | number;
  types?: string;
  contracts?: string;
  wallets?: string;
  side?: string;
  marketplaces?: string;
  minQuantity?: string | number;
  interval?: string | number;
}

export = function register(RED: NodeAPI) {
  RED.nodes.registerType("chainmail-activity", function ChainmailActivity(this: RuntimeNode, def: ActivityDef) {
    RED.nodes.createNode(this, def);
    startActivity(RED, this, def);
  });
};

/** The node's filter fields (untrusted text) as a checked filter: invalid_input naming every bad field. */
function activityFilter(def: ActivityDef): RecordFilter {
  const quantity = String(def.minQuantity ?? "").trim();
  const wallets = listOf(def.wallets);
  return parseRecordFilter(
    {
      ...(def.kind === "chain" && listOf(def.contracts) ? { contracts: listOf(def.contracts) } : {}),
      ...(wallets ? { wallets, side: def.side || "any" } : {}),
      ...(listOf(def.marketplaces) ? { marketplaces: listOf(def.marketplaces) } : {}),
      ...(quantity ? { min_quantity: Number(quantity) } : {}),
    },
    "filter",
  );
}

function startActivity(RED: NodeAPI, node: RuntimeNode, def: ActivityDef) {
  const target = activityTargetOf(def);
  const cursor = cursorFile<ActivityCursor>(RED, "chainmail-activity", node);
  // Token details kept between this node's polls.
  let cache: EnrichmentCache | undefined;
  let filter: RecordFilter;
  try {
    filter = activityFilter(def);
  } catch (error) {
    // A filter that cannot be right never polls: every bad field is named once.
    node.status(errorStatus("invalid_input"));
    node.warn(toErrorPayload(error).error);
    return;
  }
  const poll = async () => {
    const { env, secrets } = settingsOf(RED, def.config);
    try {
      const config = configOf(env);
      const polled = await pollActivity(target, cursor.read(), { config }, { filter });
      const { records } = polled;
      // Node-RED runs in a process of its own: the guarded fetch checks every resolved address too.
      cache ??= detailsCache(config);
      const details = (await activityDetails(config, cache, guardedGet)?.(records)) ?? [];
      records.forEach((record, i) => {
        // Beside the record, never in it: msg.token_details, when any is known.
        const found = details[i];
        const extra = found && Object.keys(found).length ? { token_details: found } : {};
        node.send({ payload: withExactStrings(record), topic: target.kind, ...extra });
      });
      cursor.write(polled.cursor);
      node.status(polledStatus(RED, records.length));
    } catch (error) {
      const payload = error instanceof PageError ? error.payload : toErrorPayload(error);
      node.status(errorStatus(payload.details.code));
      node.warn(scrub(payload.error, secrets));
    }
    return false;
  };
  everyInterval(node, pollInterval(def.interval), poll, cursor.remove);
}

/** What the activity node follows, from its fields. */
function activityTargetOf(def: ActivityDef): ActivityTarget {
  const types = (def.types ?? "all")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const kind = def.kind === "token" || def.kind === "chain" ? def.kind : "contract";
  return kind === "chain"
    ? { kind, type: types, start_block: Number(def.startBlock ?? 0) }
    : kind === "token"
      ? { kind, contract_address: def.contractAddress ?? "", token_id: String(def.tokenId ?? ""), type: types }
      : { kind, contract_address: def.contractAddress ?? "", type: types };
}
