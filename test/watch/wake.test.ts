/**
 * The watch learns of new records from the index without waiting its poll interval (sources/own-index/commits.ts): in
 * one process by the index's in-process signal, from another process through SQLite's data_version and the cursor
 * (PostgreSQL's LISTEN/NOTIFY: test/services/watch-wake.pg.test.ts). Poll intervals here are an hour: a test that
 * finishes was woken by the index, never by its poll.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { IndexCommits } from "../../src/sources/own-index/commits.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { watch } from "../../src/watch/watch.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, installEmitters, startAnvil } from "../support/index-helpers.js";
import { captureLogger, NFT, SEAPORT, sell } from "../support/watch-helpers.js";

const HOUR_MS = 3_600_000;

let anvil: Anvil;
let backend: IndexBackend;

beforeAll(async () => {
  backend = await openBackend("wake");
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT, SEAPORT]);
});

afterAll(async () => {
  await closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

/** A logger whose lines can be awaited by their message. */
function awaitableLogger() {
  const logger = captureLogger();
  const waiters: { msg: string; count: number; resolve: () => void }[] = [];
  const seen = (msg: string) => logger.lines.filter((l) => l.msg === msg).length;
  const settle = () => {
    for (const w of [...waiters]) {
      if (seen(w.msg) >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const wrap = (level: "info" | "warn" | "error") => {
    const write = logger[level];
    return (obj: object, msg?: string) => {
      write(obj, msg);
      settle();
    };
  };
  return {
    ...logger,
    info: wrap("info"),
    warn: wrap("warn"),
    error: wrap("error"),
    line: (msg: string, count = 1) =>
      new Promise<void>((resolve) => {
        waiters.push({ msg, count, resolve });
        settle();
      }),
  };
}

describe("the watch woken by the index", () => {
  it("mails a sale as soon as the indexer in its process commits it, its poll an hour away", async () => {
    const db = await backend.target("in-process");
    const outbox = join(backend.dir, "in-process-outbox");
    const index = { rpcUrl: anvil.rpcUrl, dbPath: db, seaport: [SEAPORT] };
    await indexChain({ ...index, follow: false });
    const stop = new AbortController();
    // The indexer follows by subscription (anvil offers one): its own poll is an hour away too.
    const indexer = indexChain({ ...index, follow: true, pollIntervalMs: HOUR_MS, signal: stop.signal });
    const logger = awaitableLogger();
    const watcher = watch({
      config: {
        source: "index",
        poll_seconds: HOUR_MS / 1000,
        from: { Email: "watch@chainmail.test" },
        rules: [{ id: "sales", contract_address: NFT, type: ["sale"], mail: { to: [{ Email: "desk@example.com" }] } }],
      },
      env: { NFT_SOURCE: "index", INDEX_DB: db, EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox },
      signal: stop.signal,
      logger,
    });
    try {
      await logger.line("rule started");
      await sell(anvil, 1, 1500);
      await logger.line("mailed");
      await sell(anvil, 2, 2500);
      await logger.line("mailed", 2);
    } finally {
      stop.abort();
    }
    const [, summary] = await Promise.all([indexer, watcher]);
    expect(summary).toMatchObject({ sent: 2, failed: 0, unknown: 0 });
    // Three polls at most: the first, and one per sale the index woke it for.
    expect(summary.polls).toBeLessThanOrEqual(3);
    expect((await listOutbox(outbox)).map((e) => e.subject)).toHaveLength(2);
  });

  it("wakes a reader in another process on the index's cursor moving, not on other writes to the file", async () => {
    if (backend.engine !== "sqlite") return;
    const db = await backend.target("other-process");
    const store = await IndexStore.open(db);
    await store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 1 });
    const commits = await IndexCommits.open(db);
    // Another connection stands for another process: no in-process signal reaches the reader.
    const other = await openDatabase(db);
    try {
      expect(await commits.wait(0)).toBe(false);
      await other.run("INSERT INTO meta (key, value) VALUES ('unrelated', 'x')");
      expect(await commits.wait(0)).toBe(false);
      await other.run("UPDATE meta SET value = '2' WHERE key = 'last_block'");
      expect(await commits.wait(HOUR_MS)).toBe(true);
      // A commit through the store, seen while nobody waits, ends the next wait at once.
      await store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 3 });
      expect(await commits.wait(HOUR_MS)).toBe(true);
      expect(await commits.wait(0)).toBe(false);
    } finally {
      await commits.close();
      await other.close();
      await store.close();
    }
  });

  it("waits out its interval on an index that does not exist yet, and wakes once it does", async () => {
    if (backend.engine !== "sqlite") return;
    const db = await backend.target("not-yet");
    const commits = await IndexCommits.open(db);
    try {
      expect(await commits.wait(0)).toBe(false);
      const store = await IndexStore.open(db);
      await store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 5 });
      await store.close();
      expect(await commits.wait(HOUR_MS)).toBe(true);
    } finally {
      await commits.close();
    }
  });

  it("wakes a reader on PostgreSQL by LISTEN/NOTIFY, its own schema's commits only", async () => {
    if (backend.engine !== "postgres") return;
    const db = await backend.target("notified");
    const store = await IndexStore.open(db);
    const commits = await IndexCommits.open(db);
    const other = await openDatabase(await backend.target("notified_other"));
    try {
      expect(await commits.wait(0)).toBe(false);
      // Another schema's commit, then this one's, from one connection: delivered in that order.
      const schema = new URL(db).searchParams.get("options")?.split("=")[1];
      await other.query("SELECT pg_notify('chainmail_index_commits', current_schema() || ':2')");
      await other.query("SELECT pg_notify('chainmail_index_commits', $1)", [`${schema}:2`]);
      expect(await commits.wait(HOUR_MS)).toBe(true);
      expect(await commits.wait(0)).toBe(false);
      await store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 7 });
      expect(await commits.wait(HOUR_MS)).toBe(true);
    } finally {
      await commits.close();
      await other.close();
      await store.close();
    }
  });
});
