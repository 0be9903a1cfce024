/**
 * `chainmail watch --dry-run` through the built command line: never silent. One line per rule on stderr says where
 * it starts (a new rule) or reads on from (saved state) and how many records it would mail, or warns, as the real
 * watch does, that the own index has not seen the chain yet. And `watch --once` counts its polls in good English.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listOutbox } from "../../../src/transports/outbox/store.js";
import { runCli } from "../../support/helpers.js";
import { type NftportServer, startNftport, VALID_KEY } from "../../upstreams/nftport.js";
import { saleIn } from "../../upstreams/nftport-data.js";

const CONTRACT = "0x4545454545454545454545454545454545454545";
const QUIET = "0x4646464646464646464646464646464646464646";
const sale = (block: number, tokenId: number) => saleIn(CONTRACT, block, tokenId);

let server: NftportServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-watch-dry-"));
  server = await startNftport({
    byContract: new Map([
      [CONTRACT, Array.from({ length: 40 }, (_, i) => sale(1000 + i, i))],
      [QUIET, []],
    ]),
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A watch file and the environment to run it with. */
function setup(name: string, config: Record<string, unknown>, env: Record<string, string> = {}) {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ from: { Email: "watch@chainmail.test" }, ...config }));
  const outbox = join(dir, `${name}-outbox`);
  const fullEnv = {
    NFTPORT_BASE_URL: server.url,
    NFTPORT_API_KEY: VALID_KEY,
    INDEX_DB: join(dir, `${name}.sqlite`),
    EMAIL_TRANSPORT: "outbox",
    OUTBOX_DIR: outbox,
    ...env,
  };
  const run = (...args: string[]) => runCli(["watch", "--config", file, ...args], { env: fullEnv });
  return { run, outbox, db: fullEnv.INDEX_DB };
}

const rule = (id: string, contract: string) => ({
  id,
  contract_address: contract,
  mail: { to: [{ Email: "desk@example.com" }] },
});
/** The dry run's line for one rule. */
const lineOf = (stderr: string, id: string) =>
  stderr.split("\n").filter((line) => line.startsWith(`chainmail watch: rule ${id}: `));

describe("chainmail watch --dry-run", () => {
  it("says per rule where it starts and how many records it would mail, then where it reads on from", async () => {
    const w = setup("nftport", { source: "nftport", rules: [rule("sales", CONTRACT), rule("quiet", QUIET)] });

    const first = await w.run("--dry-run");
    expect(first.code, first.stderr).toBe(0);
    const emails = first.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { rule: string });
    expect(emails.length).toBeGreaterThan(0);
    expect(emails.every((email) => email.rule === "sales")).toBe(true);
    const [sales] = lineOf(first.stderr, "sales");
    expect(sales).toMatch(
      /^chainmail watch: rule sales: new \(no saved state\): the watch would mail what comes after block 1039 \(2023-01-01T\S+Z for records without a block\); this preview reads its newest records, from block \d+: would mail \d+ records in \d+ emails$/,
    );
    expect(sales).toContain(`would mail ${emails.length} records in ${emails.length} emails`);
    expect(lineOf(first.stderr, "quiet")).toEqual([
      "chainmail watch: rule quiet: new (no saved state): it has no records yet: all to come is new; this preview reads its newest records, from block 0: nothing to mail",
    ]);
    expect(first.stderr.trim().split("\n")).toHaveLength(2);

    const once = await w.run("--once");
    expect(once.code, once.stderr).toBe(0);
    expect(once.stderr).toContain("chainmail watch: stopped after 1 poll: 0 sent,");

    // Saved state, nothing new: still one line per rule, nothing on stdout.
    const quiet = await w.run("--dry-run");
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toBe("");
    // It started after block 1039 and has taken nothing since: it reads on from 1040.
    const saved =
      /^chainmail watch: rule sales: saved state: reads on from block 1040 \(2023-01-01T\S+Z for records without a block\): /;
    expect(lineOf(quiet.stderr, "sales")).toEqual([
      expect.stringMatching(new RegExp(`${saved.source}nothing to mail$`)),
    ]);
    expect(lineOf(quiet.stderr, "quiet")).toHaveLength(1);

    server.add(CONTRACT, [sale(1050, 50), sale(1051, 51)]);
    const news = await w.run("--dry-run");
    expect(news.stdout.trim().split("\n")).toHaveLength(2);
    expect(lineOf(news.stderr, "sales")).toEqual([
      expect.stringMatching(new RegExp(`${saved.source}would mail 2 records in 2 emails$`)),
    ]);
    expect(await listOutbox(w.outbox)).toEqual([]);
  });

  it("shows a scheduled digest due now, named by its records, not by a slot of 1970", async () => {
    const scheduled = { ...rule("daily", CONTRACT), mode: "digest", digest: { at: "08:00", timezone: "Europe/Paris" } };
    const w = setup("scheduled", { source: "nftport", rules: [scheduled] });
    const dry = await w.run("--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    const emails = dry.stdout.trim().split("\n");
    expect(emails).toHaveLength(1);
    expect(emails[0]).toContain("cw.daily.");
    expect(emails[0]).not.toContain("1970");
  });

  it("warns, as the real watch does, when the own index has not seen the chain yet (no index at all)", async () => {
    const w = setup("no-index", { source: "index", rules: [rule("sales", CONTRACT)] });
    const dry = await w.run("--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe("");
    expect(dry.stderr.trim().split("\n")).toEqual([
      "chainmail watch: rule sales: waiting to start the rule: the index has not seen the chain yet (run chainmail index); nothing to mail",
    ]);
    expect(existsSync(w.db)).toBe(false);
  });
});
