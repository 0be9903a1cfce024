/**
 * node-red-contrib-chainmail: chainmail's four nodes as Node-RED node types, a config node for credentials and
 * origins, an activity node that emits new records as they appear, and a delivery-events node that emits the
 * Mailjet events a chainmail service stored (bounces, spam complaints, unsubscribes, opens, clicks), each once. Bundled with chainmail's workflow kit into
 * dist/chainmail.js (scripts/build-packages.mjs); the editor's part is chainmail.html beside it.
 *
 * A node's `msg.payload` in is its input object, keyed by input port ({ query, params } or { params, request });
 * each output port that fires sends one message whose `msg.payload` is that port's value, integers beyond 2^53 as
 * exact decimal strings. Secrets live in Node-RED's credential store and never reach a message, a log or a status.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dispatcherPool } from "../../../src/core/pools/dispatcher.js";
import { NodeHttpPool } from "../../../src/core/pools/node-http.js";
import { guardedGet } from "../../../src/enrichment/metadata-fetch.js";
import {
  type ActivityCursor,
  type ActivityTarget,
  type AnyNode,
  activityDetails,
  type Config,
  DETAIL_SETTINGS,
  detailsCache,
  type EnrichmentCache,
  emailSend,
  hostConfig,
  MAX_EVENTS_PER_POLL,
  type MailEventCursor,
  MailjetEventKinds,
  mailTransports,
  nftSources,
  nftTransactionsByContract,
  nftTransactionsByToken,
  nftTransactionsOnChain,
  PageError,
  parseRecordFilter,
  pollActivity,
  pollInterval,
  pollMailEvents,
  portableMailTransports,
  portableNftSources,
  type RecordFilter,
  type RunContext,
  runNodeWith,
  type SourceEntry,
  scrub,
  serviceSuppressions,
  settingsEnv,
  type TransportEntry,
  TUNING_SETTINGS,
  toErrorPayload,
  withExactStrings,
} from "../../../src/workflow/index.js";
import type { NodeAPI, NodeDef, NodeMessage, RuntimeNode } from "./node-red.js";

/** One connection pool for every node of this Node-RED process (Node's own HTTP client). */
const pool = dispatcherPool(new NodeHttpPool({ connections: 16 }));

/** The settings a node takes from Node-RED's process environment when no config node says otherwise. */
const ENV_SETTINGS = [
  "NFT_SOURCE",
  ...portableNftSources().flatMap((s) => s.settings.map((setting) => setting.env)),
  ...portableMailTransports().flatMap((t) => t.settings.map((setting) => setting.env)),
  ...TUNING_SETTINGS,
  ...DETAIL_SETTINGS,
];

function processEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENV_SETTINGS) {
    const value = process.env[name];
    if (value) env[name] = value;
  }
  // NFT_SOURCE=index or index+opensea stays: the node then says on its error port how to reach the own index (a
  // chainmail service), rather than reading silently from another source.
  return env;
}

/** What the config node holds: its fields, and its credentials by the catalog's setting keys. */
interface ChainmailConfigNode extends RuntimeNode {
  settings(): { env: Record<string, string>; secrets: string[] };
}

/** The config node's fields: the chosen source, and each setting that is no secret by its `nodeRed` name. */
interface ConfigDef extends NodeDef {
  source?: string;
  [field: string]: unknown;
}

/** The config node's credentials: each secret setting by its `nodeRed` name (nftportApiKey, rpcUrl, …). */
type Credentials = Record<string, string | undefined>;

/** What the config node holds of the portable sources and transports, as their definitions name it. */
const hostSettings = () =>
  [...portableNftSources(), ...portableMailTransports()].flatMap((entry) => entry.settings).filter((s) => s.nodeRed);

/** The config node's credentials, as registered with Node-RED (the editor's list is in chainmail.html). */
const CREDENTIALS: Record<string, { type: "password" }> = Object.fromEntries(
  hostSettings()
    .filter((setting) => setting.secret)
    .map((setting) => [setting.nodeRed!.field, { type: "password" }]),
);

/** One source's or transport's values, by its settings' keys, from the config node's fields and credentials. */
function valuesOf(entry: SourceEntry | TransportEntry, def: ConfigDef, credentials: Credentials) {
  return Object.fromEntries(
    entry.settings.map((setting) => {
      const from: Record<string, unknown> = setting.secret ? credentials : def;
      const field = setting.nodeRed?.field ?? "";
      return [setting.key, Object.hasOwn(from, field) ? from[field] : undefined];
    }),
  );
}

/** The config node's fields and credentials as chainmail's settings (the definitions' variables). */
function configSettings(def: ConfigDef, credentials: Credentials) {
  const source = nftSources.find((s) => s.id === def.source && s.portable) ?? nftSources[0]!;
  const mailjet = mailTransports.find((t) => t.id === "mailjet")!;
  const service = nftSources.find((s) => s.id === "service")!;
  // A field left empty is Node-RED's environment's (NFTPORT_BASE_URL, …), else chainmail's default.
  const keepEnv = { defaults: false };
  const env = {
    // The service is also where delivery events and the suppression list are read, whatever the NFT source.
    ...settingsEnv({ settings: service.settings }, valuesOf(service, def, credentials), "NFT_SOURCE", keepEnv),
    ...settingsEnv(source, valuesOf(source, def, credentials), "NFT_SOURCE", keepEnv),
    ...settingsEnv(mailjet, valuesOf(mailjet, def, credentials), "EMAIL_TRANSPORT", keepEnv),
  };
  const secrets = Object.values(credentials).filter((v): v is string => typeof v === "string" && v.length > 0);
  return { env, secrets };
}

/** The output ports of each node type, in order: one Node-RED output each. */
const NODE_TYPES: Record<string, AnyNode> = {
  "chainmail-nft-transactions-by-contract": nftTransactionsByContract,
  "chainmail-nft-transactions-on-chain": nftTransactionsOnChain,
  "chainmail-nft-transactions-by-token": nftTransactionsByToken,
  "chainmail-email-send": emailSend,
};

/** A status text that names no secret: the short form of an error payload. */
const errorStatus = (code: string) => ({ fill: "red" as const, shape: "ring" as const, text: code });

export = function register(RED: NodeAPI) {
  const settingsOf = (configId: string | undefined) => {
    const configNode = configId ? (RED.nodes.getNode(configId) as ChainmailConfigNode | null) : null;
    const own = configNode?.settings() ?? { env: {}, secrets: [] };
    return { env: { ...processEnv(), ...own.env }, secrets: own.secrets };
  };
  const configOf = (env: Record<string, string>): Config => hostConfig(env, pool);

  function ChainmailConfig(this: ChainmailConfigNode, def: ConfigDef) {
    RED.nodes.createNode(this, def);
    const credentials = (this.credentials ?? {}) as Credentials;
    this.settings = () => configSettings(def, credentials);
  }
  RED.nodes.registerType("chainmail-config", ChainmailConfig, { credentials: CREDENTIALS });

  for (const [type, definition] of Object.entries(NODE_TYPES)) {
    const ports = Object.keys(definition.outputs);
    function ChainmailNode(this: RuntimeNode, def: NodeDef & { config?: string; suppressions?: boolean }) {
      RED.nodes.createNode(this, def);
      this.on("input", async (msg: NodeMessage, send, done) => {
        await runOnInput(RED, this, definition, ports, settingsOf(def.config), def.suppressions === true, msg, send);
        done();
      });
    }
    RED.nodes.registerType(type, ChainmailNode);
  }

  RED.nodes.registerType("chainmail-activity", function ChainmailActivity(this: RuntimeNode, def: ActivityDef) {
    RED.nodes.createNode(this, def);
    startActivity(RED, this, def, () => settingsOf(def.config), configOf);
  });

  RED.nodes.registerType("chainmail-mail-events", function ChainmailMailEvents(this: RuntimeNode, def: EventsDef) {
    RED.nodes.createNode(this, def);
    startMailEvents(RED, this, def, () => settingsOf(def.config), configOf);
  });
};

/** One input message through a node: its output ports as messages, its status, a warning naming no secret. */
async function runOnInput(
  RED: NodeAPI,
  node: RuntimeNode,
  definition: AnyNode,
  ports: string[],
  settings: { env: Record<string, string>; secrets: string[] },
  useSuppressions: boolean,
  msg: NodeMessage,
  send: (messages: (NodeMessage | null)[]) => void,
): Promise<void> {
  node.status({ fill: "blue", shape: "dot", text: "running" });
  const { env, secrets } = settings;
  let output: Record<string, unknown>;
  try {
    const ctx: RunContext = { config: hostConfig(env, pool) };
    // email-send: recipients on the chainmail service's suppression list are answered `suppressed`, not sent.
    if (definition === emailSend && useSuppressions) ctx.suppressions = serviceSuppressions(ctx.config);
    output = await runNodeWith(definition, msg.payload, ctx);
  } catch (error) {
    output = { error: toErrorPayload(error) };
  }
  const messages = ports.map((port, i) => {
    if (!Object.hasOwn(output, port)) return null;
    const value = withExactStrings(output[port]);
    return { ...(i === 0 ? msg : RED.util.cloneMessage(msg)), payload: value };
  });
  send(messages);
  const error = output.error as { error: string; details: { code: string } } | undefined;
  if (error) {
    node.status(errorStatus(error.details.code));
    // Logged as the node's warning: the message says what to fix; a secret never reaches it.
    node.warn(scrub(error.error, secrets));
  } else node.status({ fill: "green", shape: "dot", text: summary(output) });
}

/** The status of a successful run: records or messages. */
function summary(output: Record<string, unknown>): string {
  const data = output.data as { transactions?: unknown[] } | undefined;
  if (data?.transactions) return `${data.transactions.length} records`;
  const sent = output["messages sent"] as { Messages?: { Status?: string }[] } | undefined;
  if (sent?.Messages) {
    const failed = sent.Messages.filter((m) => m.Status !== "success").length;
    return failed ? `${sent.Messages.length - failed} sent, ${failed} failed` : `${sent.Messages.length} sent`;
  }
  return "done";
}

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

/** A comma- or space-separated field as a list; empty: not given. */
const listOf = (text: string | undefined): string[] | undefined => {
  const items = (text ?? "").split(/[\s,]+/).filter(Boolean);
  return items.length ? items : undefined;
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

/**
 * The activity node: polls every `interval` seconds, sends one message per new record (oldest first), and keeps
 * its cursor in a file of Node-RED's user folder, written after the messages are sent, so that a restart goes on
 * from where it was: each record once.
 */
function startActivity(
  RED: NodeAPI,
  node: RuntimeNode,
  def: ActivityDef,
  settings: () => { env: Record<string, string>; secrets: string[] },
  configOf: (env: Record<string, string>) => Config,
) {
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
    const { env, secrets } = settings();
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
      node.status(polledStatus(records.length));
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

const polledStatus = (count: number) => ({
  fill: "green" as const,
  shape: "dot" as const,
  text: `${count} new · ${new Date().toISOString().slice(11, 19)}`,
});

/**
 * Runs `poll` at once, then every `intervalMs` (at once again when it answers true) until the node closes. A node
 * deleted from the flow forgets its cursor (`onRemoved`); a restart or a redeploy keeps it.
 */
function everyInterval(node: RuntimeNode, intervalMs: number, poll: () => Promise<boolean>, onRemoved: () => void) {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const run = async () => {
    const again = await poll();
    if (!closed) timer = setTimeout(run, again ? 0 : intervalMs);
  };
  timer = setTimeout(run, 0);
  node.on("close", (removed: boolean, done: () => void) => {
    closed = true;
    clearTimeout(timer);
    if (removed) onRemoved();
    done();
  });
}

interface EventsDef extends NodeDef {
  config?: string;
  /** Comma-separated Mailjet kinds; empty: every kind. */
  kinds?: string;
  interval?: string | number;
}

/** A cursor kept in a file of Node-RED's user folder, written after what it covers was sent. */
function cursorFile<T>(RED: NodeAPI, folder: string, node: RuntimeNode) {
  const dir = join(RED.settings.userDir ?? ".", folder);
  const file = join(dir, `${node.id}.json`);
  return {
    read(): T | undefined {
      try {
        return JSON.parse(readFileSync(file, "utf8")) as T;
      } catch {
        return undefined;
      }
    },
    write(cursor: T) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(cursor));
      renameSync(`${file}.tmp`, file);
    },
    remove: () => rmSync(file, { force: true }),
  };
}

/**
 * The delivery-events node: polls the chainmail service's event feed every `interval` seconds and sends one message
 * per event of the kinds chosen (oldest first, `topic` its kind); its cursor is kept like the activity node's, so a
 * restart goes on from where it was: each event once.
 */
function startMailEvents(
  RED: NodeAPI,
  node: RuntimeNode,
  def: EventsDef,
  settings: () => { env: Record<string, string>; secrets: string[] },
  configOf: (env: Record<string, string>) => Config,
) {
  const kinds = listOf(def.kinds);
  const unknown = (kinds ?? []).filter((k) => !(MailjetEventKinds as readonly string[]).includes(k));
  if (unknown.length) {
    node.status(errorStatus("invalid_input"));
    node.warn(
      `kinds = ${JSON.stringify(def.kinds)} is invalid: must be a comma-separated list of: ${MailjetEventKinds.join(", ")}`,
    );
    return;
  }
  const cursor = cursorFile<MailEventCursor>(RED, "chainmail-mail-events", node);
  const poll = async () => {
    const { env, secrets } = settings();
    let full = false;
    try {
      const polled = await pollMailEvents(configOf(env), cursor.read(), { kinds });
      for (const event of polled.events) node.send({ payload: withExactStrings(event), topic: event.event });
      cursor.write(polled.cursor);
      // A full poll leaves events behind: the next one goes at once.
      full = polled.events.length >= MAX_EVENTS_PER_POLL;
      node.status(polledStatus(polled.events.length));
    } catch (error) {
      const payload = toErrorPayload(error);
      node.status(errorStatus(payload.details.code));
      node.warn(scrub(payload.error, secrets));
    }
    return full;
  };
  everyInterval(node, pollInterval(def.interval), poll, cursor.remove);
}
