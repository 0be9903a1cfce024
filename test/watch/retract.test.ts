/**
 * `retract: true` on a real anvil with the own index: a reorg (anvil_reorg) that removes a record already mailed
 * sends one retraction, with its own template; a removed record that was never mailed sends none; a sweep's
 * retraction (group "transaction") names the transaction hash and every token; nothing is retracted twice.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexChain } from "../../src/ingest/indexer.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { openWatchStore } from "../../src/watch/db-store.js";
import { previewWatch, watch } from "../../src/watch/watch.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, address, installEmitters, startAnvil, transferBatch } from "../support/index-helpers.js";
import { captureLogger, NFT, SEAPORT, saleTx, sell } from "../support/watch-helpers.js";

let anvil: Anvil;
let backend: IndexBackend;

beforeAll(async () => {
  backend = await openBackend("watch_retract");
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
    reorg_depth: 6,
    rules: [{ id: name, contract_address: NFT, retract: true, mail: { to: [{ Email: "desk@example.com" }] }, ...rule }],
  };
  const logger = captureLogger();
  const index = () => indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, seaport: [SEAPORT] });
  const step = async () => {
    await index();
    return watch({ config, env, once: true, logger });
  };
  const mailed = () => listOutbox(outbox);
  const textOf = async (file: string) => (await simpleParser(await readFile(join(outbox, file)))).text ?? "";
  return { db, outbox, env, config, index, step, mailed, textOf, logger };
}

const retractions = <T extends { custom_id: string }>(mails: T[], rule: string) =>
  mails.filter((m) => m.custom_id.startsWith(`cw.${rule}.r`));

describe("retract: true", () => {
  it("a reorg that removes mailed sales sends one retraction for each, never twice; the replacing sale is mailed", async () => {
    const w = await setup("retract-each", { type: ["sale"] });
    await w.step();
    const gone = await sell(anvil, 20, 1000);
    await sell(anvil, 21, 1500);
    expect((await w.step()).sent).toBe(2);

    await anvil.rpc("anvil_reorg", [2, [[saleTx(22, 3000), 0]]]);
    expect((await w.step()).sent).toBe(3); // sale 22, and a retraction of each of 20 and 21
    const mails = await w.mailed();
    const retracted = retractions(mails, "retract-each");
    expect(retracted.map((m) => m.subject).sort()).toEqual([
      expect.stringMatching(/^retract-each: retracted: sale of ERC721 \S+ #20 for 1 ETH/),
      expect.stringMatching(/^retract-each: retracted: sale of ERC721 \S+ #21 for 1\.5 ETH/),
    ]);
    const text = await w.textOf(retracted.find((m) => m.subject.includes("#20 "))!.file);
    expect(text).toContain("A reorganisation of the chain removed what an earlier email of this rule reported");
    expect(text).toContain(`Transaction: ${gone.txHash}`);
    expect(text).toContain(`Block (no longer in the chain): ${gone.blockNumber}`);
    expect(mails.filter((m) => m.subject.includes("#22 "))).toHaveLength(1);

    // Polls after it, and more blocks on top: nothing retracted twice, nothing mailed again.
    await anvil.rpc("evm_mine");
    expect((await w.step()).sent).toBe(0);
    expect((await w.step()).sent).toBe(0);
    expect(await w.mailed()).toHaveLength(5);
    const logged = w.logger.lines.filter((l) => l.msg.startsWith("a reorg removed a record that was already mailed"));
    expect(logged.map((l) => l.msg)).toEqual(Array(2).fill(expect.stringContaining("a retraction follows")));
  });

  it("sends no retraction for a removed record that was never mailed", async () => {
    const w = await setup("retract-unmailed", { type: ["sale"], mode: "digest", digest: { records: 3 } });
    await w.step();
    await sell(anvil, 30, 1000);
    await sell(anvil, 31, 1000);
    expect((await w.step()).sent).toBe(0); // two queued, waiting for a third
    await anvil.rpc("anvil_reorg", [2, []]);
    await sell(anvil, 32, 1000);
    expect((await w.step()).sent).toBe(0);
    expect(await w.mailed()).toEqual([]);
    const store = await openWatchStore(w.db);
    try {
      expect(await store.retractable("retract-unmailed", 10)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("a digest's retraction names the removed records only, in one email", async () => {
    const w = await setup("retract-digest", { type: ["sale"], mode: "digest", digest: { records: 3 } });
    await w.step();
    await sell(anvil, 40, 1000);
    await sell(anvil, 41, 1000);
    await sell(anvil, 42, 1000);
    expect((await w.step()).sent).toBe(1);
    await anvil.rpc("anvil_reorg", [2, []]);
    expect((await w.step()).sent).toBe(1);
    const [retraction, ...others] = retractions(await w.mailed(), "retract-digest");
    expect(others).toEqual([]);
    expect(retraction!.subject).toMatch(/^retract-digest: retracted: 2 sales of \S+ #41, #42 for 2 ETH on seaport$/);
    const text = await w.textOf(retraction!.file);
    expect(text).toMatch(/Transaction: 0x[0-9a-f]{64}, 0x[0-9a-f]{64}\n/);
    expect((await w.step()).sent).toBe(0);
  });

  it('group "transaction": the retraction names the transaction hash and every token; a template of its own', async () => {
    const w = await setup("retract-sweep", {
      type: ["transfer"],
      group: "transaction",
      mail: {
        to: [{ Email: "desk@example.com" }],
        retract_subject: "Undone: {{var:count}} tokens ({{var:token_ids}}) in {{var:transaction_hash}}",
      },
    });
    await w.step();
    const sweep = await transferBatch(anvil, NFT, address(0xa11ce), address(0xb0b), [501, 502, 503], [1, 1, 1]);
    expect((await w.step()).sent).toBe(1);
    await anvil.rpc("anvil_reorg", [1, []]);
    expect((await w.step()).sent).toBe(1);
    const [retraction] = retractions(await w.mailed(), "retract-sweep");
    expect(retraction!.subject).toBe(`Undone: 3 tokens (501, 502, 503) in ${sweep.txHash}`);
    const text = await w.textOf(retraction!.file);
    expect(text).toContain(`Transaction: ${sweep.txHash}`);
    expect(text).toContain("Tokens: 501, 502, 503");
    expect((await w.step()).sent).toBe(0);
    expect(await w.mailed()).toHaveLength(2);
  });

  it("--dry-run shows the retraction the next poll sends, and writes nothing", async () => {
    const w = await setup("retract-dry", { type: ["sale"] });
    await w.step();
    await sell(anvil, 60, 1000);
    expect((await w.step()).sent).toBe(1);
    await anvil.rpc("anvil_reorg", [1, []]);
    await w.index();
    for (let i = 0; i < 2; i++) {
      const preview = await previewWatch({ config: w.config, env: w.env });
      expect(preview.map((e) => e.message.Subject)).toEqual([
        expect.stringMatching(/^retract-dry: retracted: sale of /),
      ]);
    }
    expect(await w.mailed()).toHaveLength(1);
    expect((await w.step()).sent).toBe(1);
    expect(await previewWatch({ config: w.config, env: w.env })).toEqual([]);
  });
});
