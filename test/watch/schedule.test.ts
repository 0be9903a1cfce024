/**
 * A digest on a schedule, end to end: `chainmail watch --once` processes over a real anvil and the own index, each
 * started at a moment the test chooses (test/fixtures/watch-clock.mjs). The records that came before 08:00 in Paris
 * go out in one digest at the first poll at or after it, named by the slot; those taken after it wait for the next
 * day's.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexChain } from "../../src/ingest/indexer.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { scheduledIdOf } from "../../src/watch/run.js";
import { nextSlot, type Schedule } from "../../src/watch/schedule.js";
import { runCli } from "../support/helpers.js";
import { type Anvil, installEmitters, startAnvil } from "../support/index-helpers.js";
import { NFT, SEAPORT, sell } from "../support/watch-helpers.js";

let anvil: Anvil;
let dir: string;
const CLOCK = join(import.meta.dirname, "..", "fixtures", "watch-clock.mjs");
const MINUTE = 60_000;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-watch-schedule-"));
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT, SEAPORT]);
});

afterAll(async () => {
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a digest at 08:00 in Paris", () => {
  it("sends what waited at the first poll at or after the slot, once; later records wait for the next day", async () => {
    const digest: Schedule = { at: "08:00", every: "day", timezone: "Europe/Paris" };
    const db = join(dir, "daily.sqlite");
    const outbox = join(dir, "daily-outbox");
    const file = join(dir, "daily.json");
    writeFileSync(
      file,
      JSON.stringify({
        from: { Email: "watch@chainmail.test" },
        rules: [
          { id: "daily", contract_address: NFT, mode: "digest", digest, mail: { to: [{ Email: "d@example.com" }] } },
        ],
      }),
    );
    const env = { NFT_SOURCE: "index", INDEX_DB: db, EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox };
    /** One poll of a watch process whose clock starts at `at`. */
    const pollAt = async (at: number) => {
      await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, seaport: [SEAPORT] });
      const out = await runCli(["watch", "--config", file, "--once"], {
        env: { ...env, WATCH_CLOCK_MS: String(at) },
        preload: [CLOCK],
      });
      expect(out.code, out.stderr).toBe(0);
      return listOutbox(outbox);
    };
    const textOf = async (name: string) => (await simpleParser(await readFile(join(outbox, name)))).text ?? "";

    const slot = nextSlot(digest, Date.now() + 2 * 86_400_000);
    await pollAt(slot - 3 * 60 * MINUTE); // the rule starts
    await sell(anvil, 1, 1000);
    await sell(anvil, 2, 2000);
    expect(await pollAt(slot - 2 * 60 * MINUTE)).toEqual([]);
    await sell(anvil, 3, 3000);
    expect(await pollAt(slot - MINUTE)).toEqual([]);
    await sell(anvil, 4, 4000); // read at the slot's poll: it goes with the others
    const [first, ...none] = await pollAt(slot + 5 * MINUTE);
    expect(none).toEqual([]);
    expect(first!.custom_id).toBe(scheduledIdOf("daily", slot));
    expect(first!.subject).toBe("daily: 4 new records");
    const text = await textOf(first!.file);
    for (const id of [1, 2, 3, 4]) expect(text).toContain(`#${id} for`);

    // Nothing twice; a record taken after the slot waits for the next one.
    expect(await pollAt(slot + 10 * MINUTE)).toHaveLength(1);
    await sell(anvil, 5, 5000);
    expect(await pollAt(slot + 15 * MINUTE)).toHaveLength(1);
    const next = nextSlot(digest, slot);
    expect(await pollAt(next - MINUTE)).toHaveLength(1);
    const mails = await pollAt(next + MINUTE);
    expect(mails.map((m) => [m.custom_id, m.subject])).toEqual([
      [scheduledIdOf("daily", slot), "daily: 4 new records"],
      [scheduledIdOf("daily", next), expect.stringMatching(/^daily: 1 new record/)],
    ]);
    expect(await textOf(mails[1]!.file)).toContain("#5 for");
    expect(await pollAt(next + 2 * MINUTE)).toHaveLength(2);
  });
});
