/**
 * Exactly once under max_per_hour, by property: records arrive at random moments of a simulated clock (only Date is
 * faked), the watch polls at others, and it "crashes" at random points — a store write that throws just before or
 * just after it is done, which is what SIGKILL between two transactions leaves — then starts again from its store.
 * Whatever the sequence: every record is mailed in exactly one email that went out, each email is in the outbox
 * once, no clock hour has more record emails than the cap, and an hour's digest goes only after its hour ended.
 * Real parts throughout: the SQLite journal, an own index (empty: the records are handed to the journal as a read
 * would), the outbox transport. The kill -9 of real processes is test/watch/crash.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import type { Logger } from "../../src/core/node.js";
import { openDatabase } from "../../src/db/database.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { parseWatchConfig } from "../../src/watch/config.js";
import { openWatchStore } from "../../src/watch/db-store.js";
import { WatchRun } from "../../src/watch/run.js";
import type { WatchStore } from "../../src/watch/store.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 25);
const HOUR = 3_600_000;
const NFT = "0x0000000000000000000000000000000000000721";
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const dir = mkdtempSync(join(tmpdir(), "chainmail-watch-cap-props-"));

afterAll(async () => {
  await closeIndexSources();
  rmSync(dir, { recursive: true, force: true });
});

/** The store writes a crash may come before or after (each is one transaction). */
const WRITES = new Set(["hold", "journal", "settle", "markSending"]);

class Crash extends Error {}

/** The store, dying at its `at`-th write (before it, or once it is done). */
function crashing(store: WatchStore, at: number, after: boolean): WatchStore {
  let writes = 0;
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function" || !WRITES.has(String(name))) return value;
      return async (...args: unknown[]) => {
        const mine = ++writes === at;
        if (mine && !after) throw new Crash();
        const out = await value.apply(target, args);
        if (mine) throw new Crash();
        return out;
      };
    },
  });
}

const step = fc.record({
  minutes: fc.integer({ min: 0, max: 80 }),
  records: fc.integer({ min: 0, max: 6 }),
  crash: fc.option(fc.record({ at: fc.integer({ min: 1, max: 6 }), after: fc.boolean() }), { nil: undefined }),
});

const scenario = fc.record({
  cap: fc.integer({ min: 1, max: 4 }),
  shape: fc.constantFrom("each", "transaction", "digest"),
  digestRecords: fc.integer({ min: 1, max: 4 }),
  steps: fc.array(step, { minLength: 1, maxLength: 12 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

let runs = 0;

async function check({ cap, shape, digestRecords, steps }: Scenario) {
  const name = `run${++runs}`;
  const db = join(dir, `${name}.sqlite`);
  const outbox = join(dir, `${name}-outbox`);
  const index = await IndexStore.open(db);
  await index.commitRange({ records: [], blocks: [], answers: [], lastBlock: 1 });
  await index.close();
  const rule = {
    id: "capped",
    contract_address: NFT,
    type: ["transfer"],
    max_per_hour: cap,
    mail: { to: [{ Email: "desk@example.com" }] },
    ...(shape === "transaction" ? { group: "transaction" } : {}),
    ...(shape === "digest" ? { mode: "digest", digest: { records: digestRecords, minutes: 30 } } : {}),
  };
  const watchConfig = parseWatchConfig({ source: "index", from: { Email: "watch@chainmail.test" }, rules: [rule] });
  const config = loadConfig({
    NFT_SOURCE: "index",
    INDEX_DB: db,
    EMAIL_TRANSPORT: "outbox",
    OUTBOX_DIR: outbox,
    CHAINMAIL_MAIL_DB: db,
  });
  const store = await openWatchStore(db);
  const start = Math.ceil(Date.now() / HOUR) * HOUR + 10 * HOUR;
  let now = start;
  let made = 0;
  const keys: string[] = [];
  /** A new run over the store (a restart), one tick; a crash ends it where it was. */
  const tick = async (crash?: { at: number; after: boolean }) => {
    const run = new WatchRun(watchConfig, crash ? crashing(store, crash.at, crash.after) : store, {
      follow: { config, source: "index", reorgDepth: 12 },
      send: { config },
      logger: silent,
    });
    try {
      await run.tick();
    } catch (err) {
      if (!(err instanceof Crash)) throw err;
    }
  };
  vi.useFakeTimers({ toFake: ["Date"] });
  try {
    vi.setSystemTime(now);
    await tick(); // the rule starts
    const floor = (await store.ruleState("capped"))!.floor;
    for (const s of steps) {
      now += s.minutes * 60_000;
      vi.setSystemTime(now);
      if (s.records) {
        // What a read hands the journal: records without a block (so no reorg check touches them), one transaction.
        const hash = `0x${(made + 1).toString(16).padStart(64, "0")}`;
        const taken = Array.from({ length: s.records }, () => {
          made++;
          const key = `k${made}`;
          keys.push(key);
          const record = {
            type: "transfer",
            transaction_hash: shape === "transaction" ? hash : `0x${made.toString(16).padStart(64, "0")}`,
            transaction_date: new Date(now).toISOString().slice(0, 19),
            nft: { contract_type: "ERC721", contract_address: NFT, token_id: String(made) },
            transfer_from: "0x00000000000000000000000000000000000a11ce",
            transfer_to: "0x0000000000000000000000000000000000000b0b",
            quantity: 1,
          } as unknown as TransactionRecord;
          return { key, position: { block: undefined, date: record.transaction_date }, record };
        });
        await store.take("capped", taken, floor, shape === "digest" ? now : undefined);
      }
      await tick(s.crash);
    }
    // Hours later, without crashes, everything held or left open has gone out.
    for (const later of [2, 4]) {
      vi.setSystemTime(now + later * HOUR);
      await tick();
      await tick();
    }
  } finally {
    vi.useRealTimers();
  }

  const sql = await openDatabase(db);
  try {
    const records = await sql.query<{ key: string; state: string; custom_id: string; held_hour: number | null }>(
      "SELECT key, state, custom_id, held_hour FROM watch_records WHERE rule = 'capped'",
    );
    const mails = await sql.query<{ custom_id: string; state: string; kind: string; created_at: number }>(
      "SELECT custom_id, state, kind, created_at FROM watch_mail",
    );
    // Every record taken, each in one email, sent.
    expect(records.map((r) => r.key).sort()).toEqual([...keys].sort());
    expect(records.filter((r) => r.state !== "sent")).toEqual([]);
    const sent = new Map(mails.map((m) => [m.custom_id, m]));
    for (const r of records) expect(sent.get(r.custom_id)?.state).toBe("sent");
    expect(mails.filter((m) => m.state !== "sent")).toEqual([]);
    // And no email without a record of its own (two emails claiming the same records).
    const carried = new Set(records.map((r) => r.custom_id));
    expect(mails.filter((m) => !carried.has(m.custom_id))).toEqual([]);
    // Each email once in the outbox, and every one the journal has.
    const stored = await listOutbox(outbox);
    expect(stored.map((e) => e.custom_id).sort()).toEqual(mails.map((m) => m.custom_id).sort());
    // No clock hour over the cap; an hour's digest only after its hour, carrying that hour's records.
    const perHour = new Map<number, number>();
    for (const m of mails.filter((m) => m.kind === "record")) {
      const hour = Math.floor(Number(m.created_at) / HOUR);
      perHour.set(hour, (perHour.get(hour) ?? 0) + 1);
    }
    for (const count of perHour.values()) expect(count).toBeLessThanOrEqual(cap);
    for (const m of mails.filter((m) => m.kind === "overflow")) {
      const hours = new Set(records.filter((r) => r.custom_id === m.custom_id).map((r) => Number(r.held_hour)));
      expect(hours.size).toBe(1);
      expect(Number(m.created_at)).toBeGreaterThanOrEqual(([...hours][0]! + 1) * HOUR);
    }
  } finally {
    await sql.close();
    await store.close();
  }
}

describe("max_per_hour: exactly once, whatever the clock and the crashes", () => {
  it("mails every record once, keeps each clock hour to the cap, and sends an hour's digest after it", async () => {
    await fc.assert(fc.asyncProperty(scenario, check), { numRuns: RUNS, seed: 35 });
  }, 300_000);
});
