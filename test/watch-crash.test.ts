/**
 * The crash the journal exists for, with real processes: `chainmail watch` killed with SIGKILL right after its
 * send returned and before the results were written (and right after the intent was journalled, before the send),
 * then started again. Outbox, a real SMTP server and the local Mailjet server: never twice, nothing lost. The kill
 * comes from inside the watch's process: test/fixtures/watch-kill.mjs, preloaded, subscribes to the watch's
 * diagnostics channels and sends SIGKILL at the point WATCH_KILL_AT names.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexChain } from "../src/sources/index/indexer.js";
import { listOutbox } from "../src/transports/outbox/store.js";
import { openWatchStore } from "../src/watch/db-store.js";
import { runCli } from "./helpers.js";
import { type Anvil, installEmitters, startAnvil } from "./index-helpers.js";
import { API_KEY, type MailjetServer, SECRET_KEY, startMailjet } from "./upstreams/mailjet.js";
import { type SmtpTestServer, startSmtp } from "./upstreams/smtp.js";
import { NFT, SEAPORT, sell } from "./watch-helpers.js";

let anvil: Anvil;
let dir: string;
let smtp: SmtpTestServer;
let mailjet: MailjetServer;
let token = 100;
const KILLER = join(import.meta.dirname, "fixtures", "watch-kill.mjs");

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
function scenario(name: string, transport: Record<string, string>) {
  const db = join(dir, `${name}.sqlite`);
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      from: { Email: "watch@chainmail.test" },
      rules: [{ id: name, contract_address: NFT, mail: { to: [{ Email: `${name}@example.com` }] } }],
    }),
  );
  const env = { NFT_SOURCE: "index", INDEX_DB: db, CHAINMAIL_RETRY_BASE_MS: "10", ...transport };
  return {
    db,
    async run(kill?: "journalled" | "sent") {
      await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, seaport: [SEAPORT] });
      return runCli(["watch", "--config", file, "--once"], {
        env: kill ? { ...env, WATCH_KILL_AT: kill } : env,
        ...(kill ? { preload: [KILLER] } : {}),
      });
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
