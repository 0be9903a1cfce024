/**
 * chainmail watch on the own index: a real anvil, the index built from it, the outbox and a real SMTP server.
 * Each mode, minimum prices, restarts (nothing twice) and a reorg that removes a mailed sale. The journal lives
 * beside the index: SQLite here, PostgreSQL in test/services/watch.pg.test.ts.
 */

import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { indexChain } from "../../src/ingest/indexer.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { openWatchStore } from "../../src/watch/db-store.js";
import { READ_BATCH } from "../../src/watch/follow.js";
import { previewWatch, SEND_BATCH, watch } from "../../src/watch/watch.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, installEmitters, startAnvil } from "../support/index-helpers.js";
import { captureLogger, NFT, SEAPORT, saleTx, sell, sellMany } from "../support/watch-helpers.js";
import { startSmtp } from "../upstreams/smtp.js";

let anvil: Anvil;
let backend: IndexBackend;
let dir: string;

beforeAll(async () => {
  backend = await openBackend("watch");
  dir = backend.dir;
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT, SEAPORT]);
});

afterAll(async () => {
  await closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

/** A fresh index, outbox and settings per test; `step()` indexes to the head and runs one watch poll. */
async function setup(name: string, rules: unknown[], extra: Record<string, string> = {}) {
  const db = await backend.target(name);
  const outbox = join(dir, `${name}-outbox`);
  const env = {
    NFT_SOURCE: "index",
    INDEX_DB: db,
    EMAIL_TRANSPORT: "outbox",
    OUTBOX_DIR: outbox,
    CHAINMAIL_RETRY_BASE_MS: "10",
    ...extra,
  };
  const config = { from: { Email: "watch@chainmail.test" }, reorg_depth: 6, rules };
  const logger = captureLogger();
  const index = () => indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, seaport: [SEAPORT] });
  const poll = () => watch({ config, env, once: true, logger });
  const step = async () => {
    await index();
    return poll();
  };
  return { db, outbox, env, config, logger, index, poll, step };
}

const saleRule = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  contract_address: NFT,
  type: ["sale"],
  mail: { to: [{ Email: "collector@example.com" }] },
  ...extra,
});

describe("chainmail watch on the own index", () => {
  it("mails each new sale once, from the records after its start, above the minimum price", async () => {
    const w = await setup("each", [saleRule("bayc", { min_price: { eth: 1 } })]);
    await sell(anvil, 1, 5000); // before the watch starts: never mailed
    await w.step();
    expect(await listOutbox(w.outbox)).toEqual([]);

    const a = await sell(anvil, 2, 1500);
    await sell(anvil, 3, 500); // below 1 ETH
    const c = await sell(anvil, 4, 2000);
    const first = await w.step();
    expect(first.sent).toBe(2);
    const mailed = await listOutbox(w.outbox);
    expect(mailed.map((m) => m.subject)).toEqual([
      expect.stringContaining("#2 for 1.5 ETH"),
      expect.stringContaining("#4 for 2 ETH"),
    ]);
    expect(mailed.every((m) => m.to[0] === "collector@example.com" && m.custom_id.startsWith("cw.bayc."))).toBe(true);
    expect(new Set(mailed.map((m) => m.custom_id)).size).toBe(2);
    const text = (await simpleParser(await readEml(w.outbox, mailed[0]!.file))).text ?? "";
    expect(text).toContain(a.txHash);
    expect(text).toContain(`Block: ${a.blockNumber}`);
    expect(mailed[1]!.subject).toContain(`block ${c.blockNumber}`);

    // Again and again: nothing new, nothing twice.
    expect((await w.step()).sent).toBe(0);
    expect((await w.step()).sent).toBe(0);
    await sell(anvil, 5, 1000);
    expect((await w.step()).sent).toBe(1);
    expect(await listOutbox(w.outbox)).toHaveLength(3);

    const store = await openWatchStore(w.db);
    const state = await store.ruleState("bayc");
    expect(state?.lastMailed).toBeDefined();
    expect(await store.mails(["pending", "retry", "failed", "unknown"])).toEqual([]);
    expect(await store.mails(["sent"])).toHaveLength(3);
    await store.close();
  });

  it("confirmations: a sale is mailed only once that many blocks are on top of it, then once", async () => {
    const w = await setup("confirmations", [saleRule("deep", { confirmations: 2 })]);
    await w.step();
    const sale = await sell(anvil, 40, 1000);
    expect((await w.step()).sent).toBe(0); // the head is the sale's block: none on top
    await anvil.rpc("evm_mine");
    expect((await w.step()).sent).toBe(0); // one on top
    await anvil.rpc("evm_mine");
    expect((await w.step()).sent).toBe(1); // two on top
    expect((await listOutbox(w.outbox)).map((m) => m.subject)).toEqual([
      expect.stringContaining(`block ${sale.blockNumber}`),
    ]);
    await anvil.rpc("evm_mine");
    expect((await w.step()).sent).toBe(0);
  });

  it("sends a digest when enough records are in, listing each", async () => {
    const w = await setup("digest", [
      saleRule("digest", { mode: "digest", digest: { records: 3 }, mail: { to: [{ Email: "desk@example.com" }] } }),
    ]);
    await w.step();
    await sell(anvil, 10, 100);
    await sell(anvil, 11, 200);
    await w.step();
    expect(await listOutbox(w.outbox)).toEqual([]);
    await sell(anvil, 12, 300);
    await sell(anvil, 13, 400);
    expect((await w.step()).sent).toBe(1);
    const [digest] = await listOutbox(w.outbox);
    expect(digest!.subject).toBe("digest: 4 new records");
    const text = (await simpleParser(await readEml(w.outbox, digest!.file))).text ?? "";
    for (const id of [10, 11, 12, 13]) expect(text).toContain(`#${id} for`);
    expect((await w.step()).sent).toBe(0);
  });

  it("a reorg that removes a mailed sale sends nothing for it, logs it, and mails the sale that replaced it", async () => {
    const w = await setup("reorg", [saleRule("reorg")]);
    await w.step();
    const gone = await sell(anvil, 20, 1000);
    await sell(anvil, 21, 1000);
    expect((await w.step()).sent).toBe(2);

    // Replace the last two blocks: sale 20 and 21 vanish; 22 (and 21 again, a new transaction) take their place.
    await anvil.rpc("anvil_reorg", [
      2,
      [
        [saleTx(22, 3000), 0],
        [saleTx(21, 1000), 1],
      ],
    ]);
    const after = await w.step();
    expect(after.sent).toBe(2);
    const subjects = (await listOutbox(w.outbox)).map((m) => m.subject);
    expect(subjects.filter((s) => s.includes("#20 "))).toHaveLength(1);
    expect(subjects.filter((s) => s.includes("#22 "))).toHaveLength(1);
    const removed = w.logger.lines.filter((l) => l.msg.startsWith("a reorg removed a record that was already mailed"));
    expect(removed.map((l) => l.block)).toContain(gone.blockNumber);
    expect(removed).toHaveLength(2);
    // Logged once, not on every poll.
    await w.step();
    expect(w.logger.lines.filter((l) => l.msg.startsWith("a reorg removed"))).toHaveLength(2);
  });

  it("sends through a real SMTP server, with the SMTP journal noting each message", async () => {
    const smtp = await startSmtp();
    try {
      const journal = join(dir, "smtp-journal.jsonl");
      const w = await setup("smtp", [saleRule("smtp")], {
        EMAIL_TRANSPORT: "smtp",
        SMTP_URL: smtp.url(),
        SMTP_JOURNAL: journal,
      });
      await w.step();
      await sell(anvil, 30, 1000);
      expect((await w.step()).sent).toBe(1);
      expect(smtp.received).toHaveLength(1);
      const parsed = await simpleParser(smtp.received[0]!.raw);
      expect(parsed.subject).toContain("#30 for 1 ETH");
      expect(smtp.received[0]!.to).toEqual(["collector@example.com"]);
      const steps = readFileSync(journal, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(steps.map((s) => s.step)).toEqual(["attempt", "data", "result"]);
      expect(steps[2].result.Status).toBe("success");
      expect((await w.step()).sent).toBe(0);
      expect(smtp.received).toHaveLength(1);
    } finally {
      await smtp.close();
    }
  });

  it("refuses a rule whose query changed under the same id (its cursor belongs to the old query)", async () => {
    const w = await setup("changed", [saleRule("changed")]);
    await w.step();
    const changed = { ...w.config, rules: [saleRule("changed", { token_id: "7" })] };
    await expect(watch({ config: changed, env: w.env, once: true })).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("Give a rule with a new query a new id"),
    });
  });

  it("--dry-run shows the emails without sending or writing", async () => {
    const w = await setup("dry", [saleRule("dry")]);
    await w.step();
    await sell(anvil, 40, 1000);
    await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: w.db, follow: false, seaport: [SEAPORT] });
    const preview = await previewWatch({ config: w.config, env: w.env });
    expect(preview).toHaveLength(1);
    expect(preview[0]!.message.Subject).toContain("#40 for 1 ETH");
    expect(preview[0]!.message.To).toEqual([{ Email: "collector@example.com" }]);
    expect(await listOutbox(w.outbox)).toEqual([]);
    expect((await w.step()).sent).toBe(1);
  });
});

describe("where a rule starts on the own index", () => {
  it("a first start while the index is still backfilling mails none of the history: it starts at the head the writer saw", async () => {
    const w = await setup("backfill", [saleRule("backfill")]);
    const history = [await sell(anvil, 50, 1000), await sell(anvil, 51, 1000), await sell(anvil, 52, 1000)];
    // The indexer sees the head, then stops after the block before the history: an index still backfilling.
    const stop = new AbortController();
    await indexChain({
      rpcUrl: anvil.rpcUrl,
      dbPath: w.db,
      follow: false,
      seaport: [SEAPORT],
      maxRange: 1,
      concurrency: 1,
      signal: stop.signal,
      onProgress: (p) => {
        if (p.block >= history[0]!.blockNumber - 1) stop.abort();
      },
    });
    const behind = await indexStatusOf(w.db);
    expect(behind.lastBlock).toBeLessThan(history[0]!.blockNumber);
    expect(behind.headBlock).toBe(history[2]!.blockNumber);

    expect((await w.poll()).sent).toBe(0);
    const started = w.logger.lines.find((l) => l.msg === "rule started");
    expect(started?.after_block).toBe(history[2]!.blockNumber);
    // The backfill brings the history in: none of it is news.
    expect((await w.step()).sent).toBe(0);
    await sell(anvil, 53, 1000);
    expect((await w.step()).sent).toBe(1);
    expect((await listOutbox(w.outbox)).map((m) => m.subject)).toEqual([expect.stringContaining("#53 for 1 ETH")]);
  });

  it("waits while the index has not seen the chain, then starts at the head its writer first saw", async () => {
    const w = await setup("unseen", [saleRule("unseen")]);
    expect((await w.poll()).sent).toBe(0);
    expect((await w.poll()).sent).toBe(0);
    const waiting = w.logger.lines.filter((l) => l.msg.startsWith("waiting to start the rule"));
    expect(waiting).toHaveLength(2); // once per run (each --once is a run of its own), not on every poll
    const store = await openWatchStore(w.db);
    expect(await store.ruleState("unseen")).toBeUndefined();
    await store.close();

    await sell(anvil, 54, 1000); // before the index saw the chain: history
    expect((await w.step()).sent).toBe(0);
    await sell(anvil, 55, 1000);
    expect((await w.step()).sent).toBe(1);
    expect((await listOutbox(w.outbox)).map((m) => m.subject)).toEqual([expect.stringContaining("#55 for 1 ETH")]);
  });
});

describe("digest by minutes", () => {
  it("sends one digest per window, holding the records that came in it, nothing twice", async () => {
    const w = await setup("minutes", [
      saleRule("minutes", { mode: "digest", digest: { minutes: 10 }, mail: { to: [{ Email: "desk@example.com" }] } }),
    ]);
    // The watch's clock is set per poll (only Date is faked: timers, the index and anvil run as they are).
    const start = Date.now();
    const pollAt = async (minutes: number) => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(start + minutes * 60_000);
      try {
        return (await w.poll()).sent;
      } finally {
        vi.useRealTimers();
      }
    };
    await w.index();
    expect(await pollAt(0)).toBe(0);

    await sell(anvil, 60, 100);
    await sell(anvil, 61, 200);
    await w.index();
    expect(await pollAt(1)).toBe(0); // the window opens with its first record
    await sell(anvil, 62, 300);
    await w.index();
    expect(await pollAt(10)).toBe(0);
    expect(await pollAt(10.9)).toBe(0);
    expect(await pollAt(11)).toBe(1); // ten minutes after the first record
    expect(await pollAt(30)).toBe(0);

    await sell(anvil, 63, 400);
    await w.index();
    expect(await pollAt(31)).toBe(0);
    expect(await pollAt(40.9)).toBe(0);
    expect(await pollAt(41)).toBe(1);
    expect(await pollAt(60)).toBe(0);

    const digests = await listOutbox(w.outbox);
    expect(digests.map((d) => d.subject)).toEqual(["minutes: 3 new records", "minutes: 1 new record"]);
    const texts = await Promise.all(
      digests.map(async (d) => (await simpleParser(await readEml(w.outbox, d.file))).text),
    );
    expect(tokensIn(texts[0]!)).toEqual([60, 61, 62]);
    expect(tokensIn(texts[1]!)).toEqual([63]);
  });
});

describe("long catch-ups", () => {
  it("takes more records than a read holds in batches, oldest first, and mails every one once in bounded sends", async () => {
    const first = Number(await anvil.rpc<string>("eth_blockNumber")) + 1;
    const w = await setup("catchup", [
      saleRule("catchup-digest", { mode: "digest", digest: { records: 1 }, start_block: first }),
      saleRule("catchup-each", { min_price: { eth: 2 }, start_block: first }),
    ]);
    const count = READ_BATCH + 150;
    // Every eighth sale is above the each rule's minimum: 144 emails, more than one send's worth.
    const sales = Array.from({ length: count }, (_, i) => ({ tokenId: 1000 + i, milliEth: i % 8 === 0 ? 3000 : 100 }));
    const expensive = sales.filter((s) => s.milliEth === 3000).map((s) => s.tokenId);
    expect(expensive.length).toBeGreaterThan(SEND_BATCH);
    await sellMany(anvil, sales);
    await w.index();

    // Stopped as soon as the first batch is in: what it took is the oldest records, and not all of them.
    const stop = new AbortController();
    const logger = captureLogger();
    const onLine = logger.info;
    logger.info = (obj, msg) => {
      onLine(obj, msg);
      if (msg === "new records") stop.abort();
    };
    await watch({ config: w.config, env: w.env, signal: stop.signal, logger });
    const store = await openWatchStore(w.db);
    const taken = await store.recordsFrom("catchup-digest", 0);
    expect(taken.length).toBeGreaterThan(0);
    expect(taken.length).toBeLessThanOrEqual(READ_BATCH);
    expect(taken.map(tokenOf)).toEqual(sales.slice(0, taken.length).map((s) => s.tokenId));
    expect(await store.recordsFrom("catchup-each", 0)).toEqual([]);
    await store.close();

    // Resumed: every record once, sends of at most SEND_BATCH emails.
    const sendSizes: number[] = [];
    const onJournalled = (message: unknown) => sendSizes.push((message as { mails: unknown[] }).mails.length);
    subscribe("chainmail:watch:journalled", onJournalled);
    try {
      await w.poll();
      expect((await w.poll()).sent).toBe(0);
    } finally {
      unsubscribe("chainmail:watch:journalled", onJournalled);
    }
    const batches = w.logger.lines.filter((l) => l.msg === "new records").map((l) => Number(l.records));
    expect(Math.max(...batches)).toBeLessThanOrEqual(READ_BATCH);
    expect(Math.max(...sendSizes)).toBe(SEND_BATCH);

    const mailed = await listOutbox(w.outbox);
    const digests = mailed.filter((m) => m.custom_id.startsWith("cw.catchup-digest."));
    const texts = await Promise.all(
      digests.map(async (d) => (await simpleParser(await readEml(w.outbox, d.file))).text),
    );
    expect(texts.flatMap((t) => tokensIn(t!))).toEqual(sales.map((s) => s.tokenId));
    const each = mailed.filter((m) => m.custom_id.startsWith("cw.catchup-each."));
    expect(each.map((m) => Number(/#(\d+) /.exec(m.subject)![1]))).toEqual(expensive);
    expect(new Set(mailed.map((m) => m.custom_id)).size).toBe(mailed.length);
  });
});

/** Token ids of the sales a digest lists, in its order. */
const tokensIn = (text: string) => [...text.matchAll(/#(\d+) for/g)].map((m) => Number(m[1]));
const tokenOf = (r: { record: unknown }) => Number((r.record as { nft: { token_id: string } }).nft.token_id);

async function indexStatusOf(db: string) {
  const store = await IndexStore.open(db);
  try {
    return await store.status();
  } finally {
    await store.close();
  }
}

const readEml = (outbox: string, file: string) => readFile(join(outbox, file));
