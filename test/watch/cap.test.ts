/**
 * `max_per_hour` on a real anvil with the own index: past the cap, the records of the clock hour wait for one
 * digest sent when the hour ends; nothing is lost or mailed twice. The watch's clock is set per poll (only Date is
 * faked: timers, the index and anvil run as they are).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { indexChain } from "../../src/ingest/indexer.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { previewWatch, watch } from "../../src/watch/watch.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, address, installEmitters, startAnvil, transferBatch } from "../support/index-helpers.js";
import { captureLogger, NFT, SEAPORT, sell } from "../support/watch-helpers.js";

let anvil: Anvil;
let backend: IndexBackend;
const HOUR = 3_600_000;
/** A whole clock hour, some hours from now, so the polls' hours are the test's to choose. */
const BASE = Math.ceil(Date.now() / HOUR) * HOUR + 5 * HOUR;

beforeAll(async () => {
  backend = await openBackend("watch_cap");
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT, SEAPORT]);
});

afterAll(async () => {
  await closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

async function setup(name: string, rule: Record<string, unknown>) {
  const db = await backend.target(name);
  const outbox = join(backend.dir, `${name}-outbox`);
  const env = { NFT_SOURCE: "index", INDEX_DB: db, EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox };
  const config = {
    from: { Email: "watch@chainmail.test" },
    rules: [{ id: name, contract_address: NFT, mail: { to: [{ Email: "desk@example.com" }] }, ...rule }],
  };
  const logger = captureLogger();
  const index = () => indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, seaport: [SEAPORT] });
  /** One poll at `minutes` past BASE. */
  const pollAt = async (minutes: number) => {
    await index();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(BASE + minutes * 60_000);
    try {
      return (await watch({ config, env, once: true, logger })).sent;
    } finally {
      vi.useRealTimers();
    }
  };
  const textOf = async (file: string) => (await simpleParser(await readFile(join(outbox, file)))).text ?? "";
  return { db, env, config, outbox, logger, index, pollAt, mailed: () => listOutbox(outbox), textOf };
}

const tokensIn = (text: string) => [...text.matchAll(/#(\d+) for/g)].map((m) => Number(m[1]));

describe("max_per_hour", () => {
  it("mails N records in a clock hour, the rest of that hour in one digest when it ends, then N again", async () => {
    const w = await setup("cap-each", { type: ["sale"], max_per_hour: 2 });
    expect(await w.pollAt(0)).toBe(0);
    for (const id of [1, 2, 3, 4, 5]) await sell(anvil, id, 1000);
    expect(await w.pollAt(10)).toBe(2);
    expect(await w.pollAt(30)).toBe(0);
    await sell(anvil, 6, 1000);
    expect(await w.pollAt(59.9)).toBe(0); // still the same hour: held too
    expect(
      w.logger.lines.filter((l) => l.msg.startsWith("max_per_hour reached")).map((l) => [l.records, l.hour]),
    ).toEqual([
      [3, new Date(BASE).toISOString()],
      [1, new Date(BASE).toISOString()],
    ]);

    await sell(anvil, 7, 1000);
    // The hour ended: its digest goes, and the new hour's records go one by one again (the digest is not counted).
    expect(await w.pollAt(61)).toBe(2);
    await sell(anvil, 8, 1000);
    expect(await w.pollAt(62)).toBe(1);
    expect(await w.pollAt(63)).toBe(0);

    const mails = await w.mailed();
    const digests = mails.filter((m) => m.custom_id.startsWith("cw.cap-each.h"));
    expect(digests.map((d) => d.subject)).toEqual(["cap-each: 4 more records of the hour past max_per_hour"]);
    expect(tokensIn(await w.textOf(digests[0]!.file))).toEqual([3, 4, 5, 6]);
    const single = mails.filter((m) => !m.custom_id.startsWith("cw.cap-each.h"));
    expect(single.map((m) => Number(/#(\d+) /.exec(m.subject)![1]))).toEqual([1, 2, 7, 8]);
    expect(new Set(mails.map((m) => m.custom_id)).size).toBe(mails.length);
  });

  it("an each rule's item_text shapes the hour's digest lines", async () => {
    const w = await setup("cap-items", {
      type: ["sale"],
      max_per_hour: 1,
      mail: { to: [{ Email: "desk@example.com" }], item_text: "* token {{var:token_id}}" },
    });
    await w.pollAt(0);
    for (const id of [20, 21, 22]) await sell(anvil, id, 1000);
    expect(await w.pollAt(5)).toBe(1);
    expect(await w.pollAt(60)).toBe(1);
    const digest = (await w.mailed()).find((m) => m.custom_id.startsWith("cw.cap-items.h"))!;
    expect(await w.textOf(digest.file)).toContain("* token 21\n* token 22");
  });

  it('group "transaction": a sweep past the cap waits whole for the hour\'s digest', async () => {
    const w = await setup("cap-sweep", { type: ["transfer"], group: "transaction", max_per_hour: 1 });
    await w.pollAt(0);
    const sweep = (ids: number[]) =>
      transferBatch(
        anvil,
        NFT,
        address(0xa11ce),
        address(0xb0b),
        ids,
        ids.map(() => 1),
      );
    await sweep([301, 302]);
    await sweep([303, 304, 305]);
    expect(await w.pollAt(1)).toBe(1);
    expect(await w.pollAt(70)).toBe(1);
    const [each, digest] = await w.mailed();
    expect(each!.subject).toMatch(/2 transfers of \S+ #301, #302 in /);
    expect(digest!.subject).toBe("cap-sweep: 3 more records of the hour past max_per_hour");
  });

  it("mode digest: a digest due past the cap waits for the hour's end, and then carries what came meanwhile", async () => {
    const w = await setup("cap-digest", {
      type: ["sale"],
      mode: "digest",
      digest: { records: 1 },
      max_per_hour: 1,
    });
    await w.pollAt(0);
    await sell(anvil, 40, 1000);
    expect(await w.pollAt(1)).toBe(1);
    await sell(anvil, 41, 1000);
    expect(await w.pollAt(2)).toBe(0);
    await sell(anvil, 42, 1000);
    expect(await w.pollAt(3)).toBe(0);
    expect(await w.pollAt(60)).toBe(1);
    const mails = await w.mailed();
    expect(mails.map((m) => m.subject)).toEqual([
      "cap-digest: 1 new record",
      "cap-digest: 2 more records of the hour past max_per_hour",
    ]);
    expect(tokensIn(await w.textOf(mails[1]!.file))).toEqual([41, 42]);
  });

  it("--dry-run shows what the cap lets through this hour, and writes nothing", async () => {
    const w = await setup("cap-dry", { type: ["sale"], max_per_hour: 2 });
    await w.pollAt(0);
    for (const id of [50, 51, 52]) await sell(anvil, id, 1000);
    await w.pollAt(1);
    await sell(anvil, 53, 1000);
    await sell(anvil, 54, 1000);
    await w.index();
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(BASE + 2 * 60_000);
      const sameHour = await previewWatch({ config: w.config, env: w.env });
      // Both of this hour's emails went out: 53 and 54 would be held for its digest.
      expect(sameHour).toEqual([]);
      vi.setSystemTime(BASE + 61 * 60_000);
      const nextHour = await previewWatch({ config: w.config, env: w.env });
      expect(nextHour.map((e) => e.message.Subject)).toEqual([
        "cap-dry: 1 more records of the hour past max_per_hour",
        expect.stringContaining("#53 "),
        expect.stringContaining("#54 "),
      ]);
    } finally {
      vi.useRealTimers();
    }
    expect(await w.mailed()).toHaveLength(2);
  });
});
