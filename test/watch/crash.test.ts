/**
 * The crash the journal exists for, with real processes: `chainmail watch` killed with SIGKILL right after its
 * send returned and before the results were written (and right after the intent was journalled, before the send),
 * then started again. Outbox, a real SMTP server and the local Mailjet server: never twice, nothing lost. The kill
 * comes from inside the watch's process: test/fixtures/watch-kill.mjs, preloaded, subscribes to the watch's
 * diagnostics channels and sends SIGKILL at the point WATCH_KILL_AT names.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { openWatchStore } from "../../src/watch/db-store.js";
import { scheduledIdOf } from "../../src/watch/run.js";
import { nextSlot, type Schedule } from "../../src/watch/schedule.js";
import { runCli } from "../support/helpers.js";
import { type Anvil, address, installEmitters, startAnvil, transferBatch } from "../support/index-helpers.js";
import { NFT, SEAPORT, sell, sellMany } from "../support/watch-helpers.js";
import { API_KEY, type MailjetServer, SECRET_KEY, startMailjet } from "../upstreams/mailjet.js";
import { type SmtpTestServer, startSmtp } from "../upstreams/smtp.js";

let anvil: Anvil;
let dir: string;
let smtp: SmtpTestServer;
let mailjet: MailjetServer;
let token = 100;
const KILLER = join(import.meta.dirname, "..", "fixtures", "watch-kill.mjs");
const CLOCK = join(import.meta.dirname, "..", "fixtures", "watch-clock.mjs");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-watch-crash-"));
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT, SEAPORT]);
  smtp = await startSmtp();
  mailjet = await startMailjet();
});

afterAll(async () => {
  await smtp?.close();
  await mailjet?.close();
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const mailjetEnv = () => ({
  EMAIL_TRANSPORT: "mailjet",
  MAILJET_BASE_URL: mailjet.url,
  MAILJET_API_KEY: API_KEY,
  MAILJET_SECRET_KEY: SECRET_KEY,
});

const logLines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { msg: string; state?: string });

/** A watch over one rule, run as `chainmail watch --once` processes; the index is brought to the head first. */
function scenario(name: string, transport: Record<string, string>, rule: Record<string, unknown> = {}) {
  const db = join(dir, `${name}.sqlite`);
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      from: { Email: "watch@chainmail.test" },
      rules: [{ id: name, contract_address: NFT, mail: { to: [{ Email: `${name}@example.com` }] }, ...rule }],
    }),
  );
  const env = { NFT_SOURCE: "index", INDEX_DB: db, CHAINMAIL_RETRY_BASE_MS: "10", ...transport };
  return {
    db,
    file,
    /**
     * `kill`: where test/fixtures/watch-kill.mjs kills the watch (WATCH_KILL_AT); `clockMs`: the moment the
     * watch's clock starts at (test/fixtures/watch-clock.mjs, WATCH_CLOCK_MS).
     */
    async run(kill?: string, clockMs?: number) {
      await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, seaport: [SEAPORT] });
      const preload = [...(kill ? [KILLER] : []), ...(clockMs ? [CLOCK] : [])];
      return runCli(["watch", "--config", file, "--once"], {
        env: {
          ...env,
          ...(kill ? { WATCH_KILL_AT: kill } : {}),
          ...(clockMs ? { WATCH_CLOCK_MS: String(clockMs) } : {}),
        },
        ...(preload.length ? { preload } : {}),
      });
    },
    /** `chainmail watch <command> --config <file> …`, with the watch's settings. */
    cli(command: string[]) {
      return runCli(["watch", ...command, "--config", file], { env });
    },
    async mailStates() {
      const store = await openWatchStore(db);
      try {
        return (await store.mails(["pending", "retry", "sent", "failed", "unknown"])).map((m) => m.state);
      } finally {
        await store.close();
      }
    },
  };
}

describe("chainmail watch killed between send and bookkeeping", () => {
  it("outbox: after SIGKILL past the send, the restart finds the email in the outbox and sends nothing again", async () => {
    const outbox = join(dir, "outbox-sent");
    const s = scenario("outbox-sent", { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox });
    expect((await s.run()).code).toBe(0);
    await sell(anvil, token++, 1000);
    const killed = await s.run("sent");
    expect(killed.code).toBeNull(); // SIGKILL: no exit code
    expect(await listOutbox(outbox)).toHaveLength(1);
    expect(await s.mailStates()).toEqual(["pending"]);

    const restart = await s.run();
    expect(restart.code).toBe(0);
    expect(logLines(restart.stdout).map((l) => l.msg)).toContain("an email left open by an earlier run had gone out");
    expect(await listOutbox(outbox)).toHaveLength(1);
    expect(await s.mailStates()).toEqual(["sent"]);
  });

  it("outbox: after SIGKILL before the send, the restart sends it, once", async () => {
    const outbox = join(dir, "outbox-journalled");
    const s = scenario("outbox-journalled", { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox });
    await s.run();
    await sell(anvil, token++, 1000);
    expect((await s.run("journalled")).code).toBeNull();
    expect(await listOutbox(outbox)).toHaveLength(0);
    expect(await s.mailStates()).toEqual(["pending"]);
    await s.run(); // resolves: not in the outbox → to be sent again
    await s.run();
    expect(await listOutbox(outbox)).toHaveLength(1);
    expect(await s.mailStates()).toEqual(["sent"]);
    await s.run();
    expect(await listOutbox(outbox)).toHaveLength(1);
  });

  it("smtp: the SMTP journal tells the restart the server has it", async () => {
    const s = scenario("smtp", {
      EMAIL_TRANSPORT: "smtp",
      SMTP_URL: smtp.url(),
      SMTP_JOURNAL: join(dir, "smtp-journal.jsonl"),
    });
    await s.run();
    await sell(anvil, token++, 1000);
    const before = smtp.received.length;
    expect((await s.run("sent")).code).toBeNull();
    expect(smtp.received.length).toBe(before + 1);
    await s.run();
    await s.run();
    expect(smtp.received.length).toBe(before + 1);
    expect(await s.mailStates()).toEqual(["sent"]);
  });

  it("mailjet: the restart finds the CustomID in Mailjet's message history and sends nothing again", async () => {
    const s = scenario("mailjet", mailjetEnv());
    await s.run();
    await sell(anvil, token++, 1000);
    expect((await s.run("sent")).code).toBeNull();
    expect(mailjet.deliveredTo.get("mailjet@example.com")).toBe(1);
    const restart = await s.run();
    const lookups = mailjet.requests.filter((r) => r.text === "" && r.status === 200);
    expect(lookups.length).toBeGreaterThan(0);
    expect(logLines(restart.stdout).map((l) => l.msg)).toContain("an email left open by an earlier run had gone out");
    await s.run();
    expect(mailjet.deliveredTo.get("mailjet@example.com")).toBe(1);
    expect(mailjet.duplicates()).toEqual([]);
    expect(await s.mailStates()).toEqual(["sent"]);
  });

  it("mailjet: killed before the send, the history cannot prove it never went out: delivery unknown, not resent", async () => {
    const s = scenario("mailjet-unsent", mailjetEnv());
    await s.run();
    await sell(anvil, token++, 1000);
    expect((await s.run("journalled")).code).toBeNull();
    const restart = await s.run();
    const unknown = logLines(restart.stdout).filter((l) => l.state === "unknown");
    expect(unknown).toHaveLength(1);
    expect(mailjet.deliveredTo.get("mailjet-unsent@example.com")).toBeUndefined();
    expect(await s.mailStates()).toEqual(["unknown"]);
  });
});

describe('group "transaction": a sweep is one email across crashes', () => {
  const sweep = async (ids: number[]) =>
    transferBatch(
      anvil,
      NFT,
      address(0xa11ce),
      address(0xb0b),
      ids,
      ids.map(() => 1),
    );
  const rule = { type: ["transfer"], group: "transaction" };

  it("killed past the send: the restart finds the sweep's email and sends nothing again", async () => {
    const outbox = join(dir, "sweep-sent");
    const s = scenario("sweep-sent", { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox }, rule);
    await s.run();
    await sweep([501, 502, 503]);
    expect((await s.run("sent")).code).toBeNull();
    await s.run();
    await s.run();
    const mails = await listOutbox(outbox);
    expect(mails.map((m) => m.subject)).toEqual([expect.stringMatching(/: 3 transfers of \S+ #501, #502, #503 in /)]);
    expect(await s.mailStates()).toEqual(["sent"]);
  });

  it("killed before the send: the restart sends the sweep's email, once", async () => {
    const outbox = join(dir, "sweep-journalled");
    const s = scenario("sweep-journalled", { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox }, rule);
    await s.run();
    await sweep([601, 602]);
    await sweep([603]);
    expect((await s.run("journalled")).code).toBeNull();
    expect(await listOutbox(outbox)).toHaveLength(0);
    for (let i = 0; i < 3; i++) await s.run();
    const subjects = (await listOutbox(outbox)).map((m) => String(m.subject)).sort();
    expect(subjects).toEqual([
      expect.stringMatching(/: 1 transfer of \S+ #603 in /),
      expect.stringMatching(/: 2 transfers of \S+ #601, #602 in /),
    ]);
    expect(await s.mailStates()).toEqual(["sent", "sent"]);
  });
});

describe("retract: the retraction of a mailed sale a reorg removed, across crashes", () => {
  for (const kill of ["sent", "journalled"] as const) {
    it(`killed ${kill === "sent" ? "past" : "before"} the retraction's send: in the end one retraction, once`, async () => {
      const outbox = join(dir, `retract-${kill}`);
      const s = scenario(`retract-${kill}`, { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox }, { retract: true });
      await s.run();
      await sell(anvil, token++, 1000);
      expect((await s.run()).code).toBe(0);
      await anvil.rpc("anvil_reorg", [1, []]);
      expect((await s.run(kill)).code).toBeNull();
      for (let i = 0; i < 3; i++) expect((await s.run()).code).toBe(0);
      const mails = await listOutbox(outbox);
      expect(mails.map((m) => m.subject)).toEqual([
        expect.stringMatching(/^retract-\w+: sale of /),
        expect.stringMatching(/^retract-\w+: retracted: sale of /),
      ]);
      expect(await s.mailStates()).toEqual(["sent", "sent"]);
    });
  }
});

describe("max_per_hour across crashes", () => {
  const HOUR = 3_600_000;
  /** A whole clock hour hours ahead: each run of the watch is put in the hour the test names. */
  const base = Math.ceil(Date.now() / HOUR) * HOUR + 3 * HOUR;
  const at = (hours: number) => base + hours * HOUR + 60_000;

  for (const kill of ["sent", "journalled"] as const) {
    it(`killed ${kill === "sent" ? "past" : "before"} the send of an hour's digest: it goes out once`, async () => {
      const outbox = join(dir, `cap-${kill}`);
      const s = scenario(`cap-${kill}`, { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox }, { max_per_hour: 1 });
      await s.run(undefined, at(0));
      await sellMany(
        anvil,
        [0, 1, 2].map(() => ({ tokenId: token++, milliEth: 1000 })),
      );
      expect((await s.run(undefined, at(0))).code).toBe(0);
      expect(await listOutbox(outbox)).toHaveLength(1);
      expect((await s.run(kill, at(1))).code).toBeNull();
      for (let i = 0; i < 3; i++) expect((await s.run(undefined, at(1))).code).toBe(0);
      const mails = await listOutbox(outbox);
      expect(mails.map((m) => m.subject)).toEqual([
        expect.stringMatching(/: sale of /),
        `cap-${kill}: 2 more records of the hour past max_per_hour`,
      ]);
      expect(await s.mailStates()).toEqual(["sent", "sent"]);
    });
  }

  it("killed at any moment, hour after hour: every sale in exactly one email, no hour over the cap", async () => {
    const outbox = join(dir, "cap-anytime");
    const s = scenario("cap-anytime", { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox }, { max_per_hour: 3 });
    await s.run(undefined, at(0));
    const sold: number[] = [];
    let hour = 0;
    let killed = 0;
    for (const ms of [0, 2, 5, 9, 14, 20]) {
      const batch = Array.from({ length: 5 }, () => ({ tokenId: token++, milliEth: 1000 }));
      sold.push(...batch.map((b) => b.tokenId));
      await sellMany(anvil, batch);
      if ((await s.run(`after-ms:${ms}`, at(hour))).code === null) killed++;
      hour += ms % 2 ? 1 : 0; // some runs in the same hour, some in the next
    }
    expect(killed).toBeGreaterThan(0);
    for (let i = 0; i < 2; i++) await s.run(undefined, at(hour));
    for (let i = 0; i < 2; i++) await s.run(undefined, at(hour + 1));
    expect((await s.mailStates()).filter((state) => state !== "sent")).toEqual([]);
    await expectOneFilePerEmail(outbox, (await listOutbox(outbox)).length);
    // Every sale once, across the single emails and the hours' digests.
    const tokens: number[] = [];
    for (const m of await listOutbox(outbox)) {
      const eml = await simpleParser(await readFile(join(outbox, m.file)));
      tokens.push(...[...(eml.text ?? "").matchAll(/sale of \S+ \S+ #(\d+) for/g)].map((x) => Number(x[1])));
    }
    expect(tokens.sort((a, b) => a - b)).toEqual(sold);
    // At most three record emails journalled in any clock hour (hours' digests aside).
    const sql = await openDatabase(s.db);
    try {
      const mails = await sql.query<{ created_at: number }>("SELECT created_at FROM watch_mail WHERE kind = 'record'");
      const perHour = new Map<number, number>();
      for (const m of mails) {
        const h = Math.floor(Number(m.created_at) / HOUR);
        perHour.set(h, (perHour.get(h) ?? 0) + 1);
      }
      expect(Math.max(...perHour.values())).toBeLessThanOrEqual(3);
    } finally {
      await sql.close();
    }
  });
});

describe("a digest on a schedule across crashes", () => {
  const schedule: Schedule = { at: "08:00", every: "day", timezone: "Europe/Paris" };
  for (const kill of ["sent", "journalled"] as const) {
    it(`killed ${kill === "sent" ? "past" : "before"} the send of a slot's digest: it goes out once, named by the slot`, async () => {
      const name = `slot-${kill}`;
      const outbox = join(dir, name);
      const s = scenario(name, { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox }, { mode: "digest", digest: schedule });
      const slot = nextSlot(schedule, Date.now() + 3 * 86_400_000);
      await s.run(undefined, slot - 7_200_000);
      await sellMany(
        anvil,
        [0, 1, 2].map(() => ({ tokenId: token++, milliEth: 1000 })),
      );
      expect((await s.run(undefined, slot - 3_600_000)).code).toBe(0);
      expect(await listOutbox(outbox)).toEqual([]);
      expect((await s.run(kill, slot + 60_000)).code).toBeNull();
      for (let i = 0; i < 3; i++) expect((await s.run(undefined, slot + 120_000)).code).toBe(0);
      const mails = await listOutbox(outbox);
      expect(mails.map((m) => [m.custom_id, m.subject])).toEqual([
        [scheduledIdOf(name, slot), `${name}: 3 new records`],
      ]);
      expect(await s.mailStates()).toEqual(["sent"]);
    });
  }
});

/** The outbox as it must be: every line's file there, every file named by one line, each email stored once. */
async function expectOneFilePerEmail(outbox: string, emails: number) {
  const entries = await listOutbox(outbox);
  expect(new Set(entries.map((e) => e.custom_id)).size).toBe(entries.length);
  expect(entries).toHaveLength(emails);
  const files = readdirSync(outbox).filter((f) => f !== "index.jsonl");
  expect(files.sort()).toEqual(entries.map((e) => e.file).sort());
}

describe("chainmail watch killed while the outbox writes", () => {
  it("killed between a message's file and its index line, or before the file takes its name: one file per email", async () => {
    const outbox = join(dir, "outbox-midwrite");
    const s = scenario("outbox-midwrite", { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox });
    expect((await s.run()).code).toBe(0);
    await sellMany(
      anvil,
      Array.from({ length: 6 }, () => ({ tokenId: token++, milliEth: 1000 })),
    );
    // The 3rd message written whole but never committed; then, in the next run, a message committed but not named.
    expect((await s.run("outbox-line:3")).code).toBeNull();
    expect(await listOutbox(outbox)).toHaveLength(2);
    expect((await s.run("outbox-rename:2")).code).toBeNull();
    const finished = await s.run();
    expect({ code: finished.code, stderr: finished.stderr }).toEqual({
      code: 0,
      stderr: expect.stringContaining("0 failed, 0 delivery unknown, 0 waiting"),
    });
    await expectOneFilePerEmail(outbox, 6);
    expect(await s.mailStates()).toEqual(Array(6).fill("sent"));
  });

  it("killed at any moment of a run of sends, again and again: in the end each email once, in one file", async () => {
    const outbox = join(dir, "outbox-anytime");
    const s = scenario("outbox-anytime", { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox });
    await s.run();
    const sales = 40;
    await sellMany(
      anvil,
      Array.from({ length: sales }, () => ({ tokenId: token++, milliEth: 1000 })),
    );
    // Moments spread over the sends (a fixed sequence: the same kills every run of the test).
    let killed = 0;
    for (const ms of [0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 18, 22, 27, 33, 40])
      if ((await s.run(`after-ms:${ms}`)).code === null) killed++;
    expect(killed).toBeGreaterThan(0);
    while ((await s.mailStates()).some((state) => state !== "sent")) expect((await s.run()).code).not.toBe(2);
    await expectOneFilePerEmail(outbox, sales);
    // Twenty-odd watch processes, one after another: on a loaded 2-core machine more than the default 30 s.
  }, 120_000);
});

describe("emails whose delivery is unknown", () => {
  it("smtp: killed during DATA, never resent by itself; watch status lists it, watch resend sends it once", async () => {
    const s = scenario("smtp-unknown", {
      EMAIL_TRANSPORT: "smtp",
      SMTP_URL: smtp.url(),
      SMTP_JOURNAL: join(dir, "smtp-unknown-journal.jsonl"),
    });
    await s.run();
    await sell(anvil, token++, 1000);
    expect((await s.run("smtp-data")).code).toBeNull();
    const toUs = () => smtp.received.filter((m) => m.to.includes("smtp-unknown@example.com")).length;
    const before = toUs();
    const restart = await s.run();
    expect(restart.code).toBe(1);
    expect(restart.stderr).toContain("1 delivery unknown");
    expect(restart.stderr).toContain(`chainmail watch status --config ${s.file}`);
    await s.run();
    expect(toUs()).toBe(before);

    const status = await s.cli(["status"]);
    expect(status.code).toBe(0);
    const listed = JSON.parse(status.stdout);
    expect(listed).toEqual([
      {
        custom_id: expect.stringMatching(/^cw\.smtp-unknown\./),
        rule: "smtp-unknown",
        state: "unknown",
        subject: expect.stringContaining("sale"),
        to: ["smtp-unknown@example.com"],
        attempts: 1,
        error: expect.stringContaining("chainmail-delivery-unknown"),
      },
    ]);
    const id = listed[0].custom_id as string;
    const resend = await s.cli(["resend", id, "no-such-id"]);
    expect(resend.code).toBe(1);
    expect(JSON.parse(resend.stdout)).toEqual({
      resent: [id],
      not_resent: [{ custom_id: "no-such-id", reason: "no such email in this watch's journal" }],
    });
    expect(JSON.parse((await s.cli(["status"])).stdout)).toMatchObject([{ custom_id: id, state: "retry" }]);
    expect((await s.run()).code).toBe(0);
    expect(toUs()).toBe(before + 1);
    expect(JSON.parse((await s.cli(["status"])).stdout)).toEqual([]);
    expect(JSON.parse((await s.cli(["status", "--all"])).stdout)).toMatchObject([
      { custom_id: id, state: "sent", attempts: 2 },
    ]);
    // Sent: asking again changes nothing.
    expect(JSON.parse((await s.cli(["resend", id])).stdout)).toEqual({
      resent: [],
      not_resent: [{ custom_id: id, reason: "it was sent" }],
    });
    await s.run();
    expect(toUs()).toBe(before + 1);
  });

  it("a run in which an email failed ends with exit 1, naming what to run", async () => {
    const s = scenario(
      "smtp-refused",
      { EMAIL_TRANSPORT: "smtp", SMTP_URL: smtp.url(), SMTP_JOURNAL: join(dir, "smtp-refused-journal.jsonl") },
      { mail: { to: [{ Email: "refused@example.com" }] } },
    );
    expect((await s.run()).code).toBe(0);
    smtp.rules.rejectRecipients = ["refused@example.com"];
    try {
      await sell(anvil, token++, 1000);
      const out = await s.run();
      expect(out.code).toBe(1);
      expect(out.stderr).toContain("1 failed");
      expect(JSON.parse((await s.cli(["status"])).stdout)).toMatchObject([{ state: "failed" }]);
    } finally {
      smtp.rules.rejectRecipients = [];
    }
  });
});
