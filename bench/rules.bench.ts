/**
 * Many rules on one watch (issue 35): 1,000 rules over 100 collections, each asking one confirmation, on a local
 * anvil followed by `chainmail index` and `chainmail watch` (their own processes, default settings, outbox). Half
 * the rules follow one collection (`contract_address`), half a list of five (`contracts`): each collection is in 5 +
 * 25 rules, so each record is mailed 30 times.
 *
 * The clock starts when the record is confirmed: when the bench, subscribed to anvil's `newHeads`, is told of the
 * block on top of the record's (a block is mined every 500 ms besides the mints). It stops when the outbox has
 * written the mail (its index line's `date`). The goal: every mail out within one poll of the watch (2 s for the
 * own index) of its confirmation.
 *
 * BENCH_RULES_RECORDS (default 50) mints, one collection at a time, spaced 0–300 ms at random; BENCH_RULES_TRACE=1
 * prints the mails written, second by second.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { listOutbox } from "../src/transports/outbox/store.js";
import { address, erc721Transfer, installEmitters, startAnvil } from "../test/support/index-helpers.js";
import { caughtUp, cli, followHeads, loadText, summary } from "./inbox.bench.js";

const RECORDS = Number(process.env.BENCH_RULES_RECORDS ?? 50);
const COLLECTIONS = 100;
const RULES = 1_000;
const POLL_SECONDS = 2;
const dir = join(import.meta.dirname, "..", ".bench-tmp", "rules");
const ZERO = "0x0000000000000000000000000000000000000000";

export default async function bench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const anvil = await startAnvil();
  const heads = await followHeads(anvil.rpcUrl);
  let mining = true;
  const miner = (async () => {
    while (mining) {
      await sleep(500);
      await anvil.rpc("evm_mine", []).catch(() => undefined);
    }
  })();
  const db = join(dir, "index.sqlite");
  const outbox = join(dir, "outbox");
  const env = { INDEX_DB: db, NFT_SOURCE: "index", EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox };
  const collections = Array.from({ length: COLLECTIONS }, (_, i) => address(0xc0_0000 + i));
  const index = cli(["index", "--rpc", anvil.rpcUrl, "--db", db], env);
  let watcher: ReturnType<typeof cli> | undefined;
  try {
    await installEmitters(anvil, collections);
    await caughtUp(db, Math.max(...heads.seen.keys(), 0));
    const config = join(dir, "watch.json");
    writeFileSync(config, JSON.stringify(watchConfig(collections)));
    watcher = cli(["watch", "--config", config], env);
    // Each rule mails what happens once it has started: the mints wait for all of them.
    await watcher.printed('"rule started"', RULES);
    // The mints: collection i % 100, token i; the block each landed in.
    const blockOf = new Map<number, number>();
    for (let i = 0; i < RECORDS; i++) {
      const { blockNumber } = await erc721Transfer(anvil, collections[i % COLLECTIONS]!, ZERO, address(0xbeef), i);
      blockOf.set(i, blockNumber);
      await sleep(Math.round(Math.random() * 300));
    }
    const expected = RECORDS * 30;
    const minted = Date.now();
    for (let waited = 0; waited < 300_000; waited += 1000) {
      const written = (await listOutbox(outbox).catch(() => [])).length;
      if (process.env.BENCH_RULES_TRACE)
        console.log(`${((Date.now() - minted) / 1000).toFixed(0)} s: ${written} mails`);
      if (written >= expected) break;
      await sleep(1000);
    }
    const mails = await listOutbox(outbox);
    if (mails.length !== expected) throw new Error(`${mails.length} of ${expected} mails written`);
    const latencies = mails.map((mail) => {
      const token = Number(/#(\d+)$/.exec(mail.subject)?.[1]);
      const confirmed = heads.seen.get(blockOf.get(token)! + 1);
      if (!confirmed) throw new Error(`the block on top of token ${token}'s was never announced`);
      return Date.parse(mail.date) - confirmed.at;
    });
    const { p50, p99, max } = summary(latencies);
    const s = (ms: number) => `${(ms / 1000).toFixed(3)} s`;
    console.log(`${RULES} rules over ${COLLECTIONS} collections, ${RECORDS} records, ${mails.length} mails`);
    console.log("| from confirmation to outbox | p50 | p99 | max | within one poll (2 s) | load after |");
    console.log("|---|---|---|---|---|---|");
    const within = latencies.filter((ms) => ms <= POLL_SECONDS * 1000).length;
    console.log(`| outbox | ${s(p50)} | ${s(p99)} | ${s(max)} | ${within} of ${latencies.length} | ${loadText()} |`);
  } finally {
    mining = false;
    await miner;
    await watcher?.stop();
    await index.stop();
    heads.close();
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Rules 0–499 follow collection i % 100; rules 500–999 the five collections from 5i % 100. One confirmation. */
function watchConfig(collections: string[]) {
  const rules = Array.from({ length: RULES }, (_, i) => {
    const half = RULES / 2;
    const follows =
      i < half
        ? { contract_address: collections[i % COLLECTIONS] }
        : { contracts: Array.from({ length: 5 }, (_, k) => collections[(5 * (i - half) + k) % COLLECTIONS]) };
    return {
      id: `r${i}`,
      ...follows,
      type: ["mint"],
      confirmations: 1,
      mail: { to: [{ Email: `desk${i}@example.com` }], subject: "{{var:rule}} #{{var:token_id}}" },
    };
  });
  return { source: "index", poll_seconds: POLL_SECONDS, from: { Email: "bench@chainmail.test" }, rules };
}
