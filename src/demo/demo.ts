/**
 * The embedded demo behind `npm start`: a local chain with real NFT activity, indexed, served, and queried once —
 * offline, with no keys. `startDemo` brings everything up and returns a handle whose `stop()` takes it all down
 * again (service, indexer, anvil), in reverse order.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Config, loadConfig } from "../core/config.js";
import { ChainmailError } from "../core/errors.js";
import { type AnyNode, type Logger, runNode } from "../core/node.js";
import { indexChain } from "../ingest/index.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../nodes/index.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { type RunningServer, startServer } from "../server/index.js";
import { closeIndexSources } from "../sources/own-index/index.js";
import { watch } from "../watch/watch.js";
import { type ActivityManifest, BIG_ERC1155_ID, createActivity, createLiveSale } from "./activity.js";
import { type Deployed, deployAll } from "./contracts.js";
import { startAnvil } from "./devchain.js";
import { sendSalesDigest, shortAddress } from "./digest.js";

export interface DemoOptions {
  /** Port of the HTTP service; when taken, a free one is used instead. Default CHAINMAIL_PORT or 8080. */
  port?: number;
  host?: string;
  /** Wiped and recreated on every start. Default ./data/demo. */
  dataDir?: string;
  /** Environment the service and the nodes read (NFT_SOURCE and INDEX_DB are set by the demo). */
  env?: Record<string, string | undefined>;
  /** Where the demo's report goes, line by line. Default stdout. */
  print?: (line: string) => void;
  /**
   * Aborting it during start-up stops at once whatever had started (in reverse order) and rejects with `aborted`:
   * a Ctrl-C never waits for a step that may never finish (anvil dies with the same Ctrl-C).
   */
  signal?: AbortSignal;
}

export interface RunningDemo {
  rpcUrl: string;
  serviceUrl: string;
  dbPath: string;
  deployed: Deployed;
  manifest: ActivityManifest;
  /** Stops the service, the indexer and anvil. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startDemo(options: DemoOptions = {}): Promise<RunningDemo> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const env = options.env ?? process.env;
  const dataDir = resolve(options.dataDir ?? "data/demo");
  const dbPath = join(dataDir, "index.sqlite");
  // Undo stack: whatever started is stopped, in reverse order, on failure and on stop().
  const cleanups: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  const undo = (cleanup: () => Promise<void>) =>
    cleanup().catch((err) => print(`  (while stopping: ${err instanceof Error ? err.message : err})`));
  const stop = () => {
    stopping ??= (async () => {
      for (const cleanup of cleanups.reverse()) await undo(cleanup);
    })();
    return stopping;
  };
  // A step that finishes after the demo was stopped has its work undone at once.
  const started = (cleanup: () => Promise<void>) => {
    if (stopping) void stopping.then(() => undo(cleanup));
    else cleanups.push(cleanup);
  };
  // Each start-up step races the signal: stopped during start-up, the demo does not wait for the step to end.
  const abort = options.signal;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new ChainmailError("ABORTED", "The demo was stopped during start-up."));
    if (abort?.aborted) onAbort();
    else abort?.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  const step = <T>(work: Promise<T>): Promise<T> => Promise.race([work, aborted]);

  try {
    print("chainmail demo: a local Ethereum dev chain, indexed and served. No network, no keys.\n");
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });

    const anvil = await step(startAnvil());
    started(() => anvil.stop());
    print(`1. anvil (dev chain) at ${anvil.rpcUrl}`);

    const deployed = await step(deployAll(anvil.rpcUrl));
    print("2. deployed from real artifacts:");
    print(`     Seaport 1.6        ${deployed.seaport}   (ConduitController ${deployed.conduitController})`);
    print(`     ERC-721            ${deployed.erc721}`);
    print(`     ERC-1155           ${deployed.erc1155}`);
    print(`     WETH (TestERC20)   ${deployed.weth}`);
    print(`     ETH/USD price feed ${deployed.priceFeed}`);

    const manifest = await step(createActivity(anvil.rpcUrl, deployed));
    print(`3. created activity in blocks ${manifest.blocks[0]}-${manifest.blocks[1]}: ${countKinds(manifest.records)}`);

    const config = loadConfig({ ...env, NFT_SOURCE: "index", INDEX_DB: dbPath });
    const indexOptions = {
      rpcUrl: anvil.rpcUrl,
      dbPath,
      priceFeed: deployed.priceFeed,
      seaport: [deployed.seaport],
      ethTokens: [deployed.weth],
      config,
    };
    const catchingUp = new AbortController();
    const caughtUp = await step(indexChain({ ...indexOptions, follow: false, signal: catchingUp.signal })).catch(
      (err: unknown) => {
        catchingUp.abort();
        throw err;
      },
    );
    print(`4. indexed to block ${caughtUp.lastBlock}: ${caughtUp.records} records in ${dbPath}`);
    // Then keep following the chain, so activity sent to anvil from now on shows up in the service too.
    const following = new AbortController();
    const follower = indexChain({ ...indexOptions, follow: true, signal: following.signal }).catch((err) => {
      if (!following.signal.aborted) print(`  indexer stopped: ${err instanceof Error ? err.message : err}`);
    });
    started(async () => {
      following.abort();
      await follower;
    });
    started(async () => closeIndexSources());

    const server = await step(listen(options, config));
    started(() => server.close());
    print(`5. HTTP service at ${server.url} (NFT_SOURCE=index)\n`);

    const sales = await step(runRetrievers(config, deployed, manifest, print));

    // The email side: a digest of the sales through the outbox transport (an .eml file, no mail server).
    const digest = await step(sendSalesDigest(sales, join(dataDir, "outbox"), env));
    print(`6. sales digest email ${digest.summary}`);

    // The watch: it follows the index, and the sale made now reaches the outbox as an email of its own.
    const watching = await step(startWatch(deployed, dataDir, dbPath, env, print, started));
    const live = await step(createLiveSale(anvil.rpcUrl, deployed));
    const mailed = await step(watching.mailed);
    print(
      `7. chainmail watch: a sale made after start-up (block ${live.blockNumber}) was mailed to the outbox: "${mailed}"`,
    );
    print(`     (the watch keeps running: chainmail watch --config ${join(dataDir, "watch.json")} does the same)\n`);

    printHowToCall(server.url, deployed, dbPath, print);
    printIndexCommand(anvil.rpcUrl, deployed, join(dataDir, "my-index.sqlite"), print);
    abort?.removeEventListener("abort", onAbort!);
    return { rpcUrl: anvil.rpcUrl, serviceUrl: server.url, dbPath, deployed, manifest, stop };
  } catch (err) {
    abort?.removeEventListener("abort", onAbort!);
    await stop();
    // Stopped on request: that is what the caller hears, not what the interrupted step ran into.
    if (abort?.aborted) throw new ChainmailError("ABORTED", "The demo was stopped during start-up.", { cause: err });
    throw err;
  }
}

/**
 * Starts `watch` on the demo's index with one rule (sales of the ERC-721 collection, one email each, to the
 * outbox) and writes that rule to `watch.json` for the command line. `mailed` resolves with the subject of the
 * first email it sends.
 */
async function startWatch(
  deployed: Deployed,
  dataDir: string,
  dbPath: string,
  env: Record<string, string | undefined>,
  print: (line: string) => void,
  onStop: (cleanup: () => Promise<void>) => void,
) {
  const config = {
    source: "index",
    poll_seconds: 0.5,
    from: { Email: "watch@chainmail.local", Name: "chainmail watch" },
    rules: [
      {
        id: "demo-sales",
        contract_address: deployed.erc721,
        type: ["sale"],
        mail: { to: [{ Email: "you@example.com" }], subject: "Sold: #{{var:token_id}} for {{var:price}} ETH" },
      },
    ],
  };
  writeFileSync(join(dataDir, "watch.json"), `${JSON.stringify(config, null, 2)}\n`);
  const controller = new AbortController();
  let started!: () => void;
  let mailed!: (subject: string) => void;
  const ready = new Promise<void>((resolve) => {
    started = resolve;
  });
  const first = new Promise<string>((resolve) => {
    mailed = resolve;
  });
  const logger: Logger = {
    debug: () => undefined,
    info: (obj, msg) => {
      if (msg === "rule started") started();
      if (msg === "mailed") mailed(String((obj as { subject?: string }).subject ?? ""));
    },
    warn: (obj, msg) => print(`  watch: ${msg} ${JSON.stringify(obj)}`),
    error: (obj, msg) => print(`  watch: ${msg} ${JSON.stringify(obj)}`),
  };
  const running = watch({
    config,
    env: {
      ...env,
      NFT_SOURCE: "index",
      INDEX_DB: dbPath,
      EMAIL_TRANSPORT: "outbox",
      OUTBOX_DIR: join(dataDir, "outbox"),
    },
    signal: controller.signal,
    logger,
  }).catch((err) => print(`  watch stopped: ${err instanceof Error ? err.message : err}`));
  // Stopped as soon as it runs, even when start-up is interrupted before it has started a rule.
  onStop(async () => {
    controller.abort();
    await running;
  });
  await ready;
  return { mailed: first };
}

/** Starts the service where asked (else where CHAINMAIL_PORT / CHAINMAIL_HOST say, else startServer's defaults). */
async function listen(options: DemoOptions, config: Config): Promise<RunningServer> {
  const host = options.host ? { host: options.host } : {};
  try {
    return await startServer({ config, ...host, ...(options.port !== undefined ? { port: options.port } : {}) });
  } catch (err) {
    if ((err as { code?: string }).code !== "EADDRINUSE") throw err;
    // The demo should start on any machine: a busy default port is no reason to fail. Port 0: the OS picks one.
    return startServer({ config, ...host, port: 0 });
  }
}

/** Runs the three retrievers once on the index and prints their records; returns the sales seen. */
async function runRetrievers(
  config: Config,
  deployed: Deployed,
  manifest: ActivityManifest,
  print: (line: string) => void,
): Promise<TransactionRecord[]> {
  const calls: [AnyNode, Record<string, unknown>][] = [
    [nftTransactionsByContract, { contract_address: deployed.erc721, type: ["all"] }],
    [nftTransactionsByToken, { contract_address: deployed.erc1155, token_id: BIG_ERC1155_ID.toString() }],
    [nftTransactionsOnChain, { from_block: manifest.blocks[0], to_block: manifest.blocks[1], type: ["all"] }],
  ];
  const sales = new Map<string, TransactionRecord>();
  for (const [node, query] of calls) {
    print(`── ${node.id}  ${JSON.stringify(query)}`);
    const output = (await runNode(node, { query }, { config })) as {
      data?: { transactions: TransactionRecord[] };
      error?: { error: string };
    };
    if (!output.data) {
      throw new ChainmailError("INTERNAL", `${node.id} failed on the demo index: ${output.error?.error ?? "no data"}`);
    }
    const records = output.data.transactions;
    for (const record of records) {
      print(`   ${describe(record)}`);
      if (record.type === "sale") sales.set(`${record.transaction_hash}:${record.nft.token_id}`, record);
    }
    print(`   → ${records.length} records: ${countKinds(records)}\n`);
  }
  return [...sales.values()];
}

function countKinds(records: readonly { type: string }[]): string {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  return ["mint", "transfer", "burn", "sale"]
    .filter((kind) => counts.has(kind))
    .map((kind) => `${counts.get(kind)} ${kind}`)
    .join(", ");
}

const shortId = (id: string) => (id.length > 12 ? `${id.slice(0, 5)}…${id.slice(-4)}` : id);

/** One record on one line: kind, token, quantity, parties, price, block. */
function describe(record: TransactionRecord): string {
  const r = record as Record<string, any>;
  const kind = String(r.type).padEnd(8);
  const block = `block ${r.block_number}`;
  if (r.type === "sale") {
    const p = r.price_details ?? {};
    const currency = p.asset_type === "ETH" ? "ETH" : `ERC20 ${shortAddress(p.contract_address)}`;
    const usd = typeof p.price_usd === "number" ? ` ($${p.price_usd.toFixed(2)})` : "";
    return `${kind} ${r.nft.contract_type} #${shortId(String(r.nft.token_id))} ×${r.quantity}  ${p.price} ${currency}${usd}  ${shortAddress(r.seller_address)} → ${shortAddress(r.buyer_address)}  ${r.marketplace}  ${block}`;
  }
  const parties =
    r.type === "transfer"
      ? `${shortAddress(r.transfer_from)} → ${shortAddress(r.transfer_to)}`
      : `owner ${shortAddress(r.owner_address)}`;
  return `${kind} #${shortId(String(r.token_id))} ×${r.quantity}  ${parties}  ${block}`;
}

function printHowToCall(url: string, deployed: Deployed, dbPath: string, print: (line: string) => void): void {
  const post = (node: string, input: unknown) =>
    `  curl -s -X POST ${url}/nodes/${node} -H 'content-type: application/json' -d '${JSON.stringify(input)}'`;
  print("Call the service:");
  print(post("nft-transactions-by-contract", { query: { contract_address: deployed.erc721, type: ["sale"] } }));
  print(
    post("nft-transactions-by-token", {
      query: { contract_address: deployed.erc1155, token_id: BIG_ERC1155_ID.toString() },
    }),
  );
  print(post("nft-transactions-on-chain", { query: { type: ["sale"], page_size: 10 } }));
  print(`  curl -s ${url}/nodes          # the nodes and their JSON Schemas; API docs at ${url}/docs`);
  print("Or the command line (same index):");
  print(
    `  NFT_SOURCE=index INDEX_DB=${dbPath} npx chainmail run nft-transactions-by-contract --input '${JSON.stringify({ query: { contract_address: deployed.erc721 } })}'`,
  );
}

/** A word for a POSIX shell: as it is when it needs no quoting, else in single quotes. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/**
 * The `chainmail index` line that indexes the demo's chain into an index of one's own. The demo's Seaport, WETH
 * and price feed are not at their mainnet addresses: without naming them, an index of this chain sees the
 * transfers but none of the sales.
 */
function printIndexCommand(rpcUrl: string, deployed: Deployed, db: string, print: (line: string) => void): void {
  print("Or index this chain yourself (its Seaport, WETH and price feed are not at mainnet's addresses: name them):");
  print(
    `  npx chainmail index --rpc ${rpcUrl} --seaport ${deployed.seaport} --eth-tokens ${deployed.weth} --price-feed ${deployed.priceFeed} --db ${shellWord(db)} --once`,
  );
}
