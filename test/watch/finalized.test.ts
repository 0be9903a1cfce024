/**
 * `confirmations: "finalized"` on a real anvil with the own index: a sale is mailed only once its block is at or
 * below the finalized block of INDEX_RPC_URL's node (anvil: 64 blocks below its head), then once; a node that cannot
 * say holds the records back; a file that cannot be followed (no INDEX_RPC_URL, not the own index) is refused naming
 * `rules[i].confirmations`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexChain } from "../../src/ingest/indexer.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { parseWatchConfig } from "../../src/watch/config.js";
import { watch } from "../../src/watch/watch.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, installEmitters, startAnvil } from "../support/index-helpers.js";
import { captureLogger, NFT, SEAPORT, sell } from "../support/watch-helpers.js";

let anvil: Anvil;
let backend: IndexBackend;

beforeAll(async () => {
  backend = await openBackend("watch_finalized");
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT, SEAPORT]);
});

afterAll(async () => {
  await closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

const mail = { to: [{ Email: "collector@example.com" }] };
const rule = (extra: Record<string, unknown> = {}) => ({
  id: "final",
  contract_address: NFT,
  confirmations: "finalized",
  mail,
  ...extra,
});

async function setup(name: string, rpcUrl: string) {
  const db = await backend.target(name);
  const outbox = join(backend.dir, `${name}-outbox`);
  const env = {
    NFT_SOURCE: "index",
    INDEX_DB: db,
    INDEX_RPC_URL: rpcUrl,
    EMAIL_TRANSPORT: "outbox",
    OUTBOX_DIR: outbox,
  };
  const config = { from: { Email: "watch@chainmail.test" }, reorg_depth: 6, rules: [rule()] };
  const logger = captureLogger();
  const step = async () => {
    await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, seaport: [SEAPORT] });
    return (await watch({ config, env, once: true, logger })).sent;
  };
  return { outbox, logger, step };
}

const finalizedBlock = async () =>
  Number((await anvil.rpc<{ number: string }>("eth_getBlockByNumber", ["finalized", false])).number);
const head = async () => Number(await anvil.rpc<string>("eth_blockNumber"));
const mine = (blocks: number) => anvil.rpc("anvil_mine", [`0x${blocks.toString(16)}`]);

describe('confirmations: "finalized"', () => {
  it("mails a sale once the node's finalized block reaches it, then never again", async () => {
    const w = await setup("finalized", anvil.rpcUrl);
    expect(await w.step()).toBe(0);
    const sale = await sell(anvil, 1, 1000);
    // Anvil finalizes 64 blocks below its head (block 0 on a shorter chain): the sale is far from it.
    expect(await finalizedBlock()).toBeLessThan(sale.blockNumber);
    expect(await w.step()).toBe(0);
    await mine(sale.blockNumber + 63 - (await head()));
    expect(await finalizedBlock()).toBe(sale.blockNumber - 1);
    expect(await w.step()).toBe(0); // one block short
    await mine(1);
    expect(await finalizedBlock()).toBe(sale.blockNumber);
    expect(await w.step()).toBe(1);
    expect((await listOutbox(w.outbox)).map((m) => m.subject)).toEqual([
      expect.stringContaining(`block ${sale.blockNumber}`),
    ]);
    await mine(3);
    expect(await w.step()).toBe(0);
    expect(await listOutbox(w.outbox)).toHaveLength(1);
  });

  it("a node that cannot say its finalized block holds the records back, says so once, and they go when it can", async () => {
    let finalizedKnown = false;
    // A node of our own for the watch's question, answering "no finalized block" until told otherwise (anvil's
    // answer after that): the index itself is built from anvil.
    const node: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", async () => {
        const call = JSON.parse(body) as { id: unknown; method: string; params: unknown[] };
        res.setHeader("content-type", "application/json");
        try {
          const result = finalizedKnown ? await anvil.rpc(call.method, call.params) : null;
          res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
        } catch (err) {
          // What anvil refuses (the token details' eth_calls to contracts without them) goes back as its error.
          res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, error: { code: 3, message: String(err) } }));
        }
      });
    });
    await new Promise<void>((ok) => node.listen(0, "127.0.0.1", ok));
    try {
      const w = await setup("finalized-none", `http://127.0.0.1:${(node.address() as AddressInfo).port}`);
      expect(await w.step()).toBe(0);
      await sell(anvil, 2, 1000);
      await mine(70);
      expect(await w.step()).toBe(0);
      expect(await w.step()).toBe(0);
      const warned = w.logger.lines.filter((l) => l.msg.startsWith("the node could not say its finalized block"));
      expect(warned.length).toBeGreaterThanOrEqual(1);
      expect(warned[0]!.error).toBe("it has no finalized block");
      finalizedKnown = true;
      expect(await w.step()).toBe(1);
    } finally {
      await new Promise((ok) => node.close(ok));
    }
  });

  it("is refused naming rules[i].confirmations where the watch cannot tell, and retract beside it names retract", () => {
    const file = (source: string, rules: object[]) => ({ source, from: { Email: "w@example.com" }, rules });
    const fieldsOf = (run: () => unknown) => {
      try {
        run();
        return [];
      } catch (err) {
        return (
          (err as { details: { violations: { field: string; message: string }[] } }).details.violations ?? []
        ).map((v) => `${v.field}: ${v.message}`);
      }
    };
    const rpc = { indexRpcUrl: "http://127.0.0.1:8545" };
    expect(fieldsOf(() => parseWatchConfig(file("index", [rule()]), undefined, rpc))).toEqual([]);
    expect(fieldsOf(() => parseWatchConfig(file("index+opensea", [rule()]), undefined, rpc))).toEqual([]);
    const noRpc = fieldsOf(() => parseWatchConfig(file("index", [rule()]), undefined, { indexRpcUrl: "" }));
    expect(noRpc).toEqual([expect.stringMatching(/^rules\[0\]\.confirmations: .*needs INDEX_RPC_URL/)]);
    for (const source of ["nftport", "opensea"]) {
      expect(fieldsOf(() => parseWatchConfig(file(source, [rule()]), undefined, rpc))).toEqual([
        expect.stringMatching(/^rules\[0\]\.confirmations: .*invalid with source/),
      ]);
    }
    expect(fieldsOf(() => parseWatchConfig(file("index", [rule({ retract: true })]), undefined, rpc))).toEqual([
      expect.stringMatching(/^rules\[0\]\.retract: .*once its block is finalized/),
    ]);
    expect(fieldsOf(() => parseWatchConfig(file("index", [rule({ confirmations: "final" })]), undefined, rpc))).toEqual(
      [
        expect.stringMatching(
          /^rules\[0\]\.confirmations: rules\[0\]\.confirmations = "final" is invalid: must be 0 to 64, or "finalized"/,
        ),
      ],
    );
    // The watch itself checks the setting it runs with.
    expect(
      fieldsOf(() =>
        parseWatchConfig(file("index", [rule(), { ...rule(), id: "two" }]), undefined, { indexRpcUrl: undefined }),
      ).map((v) => v.split(":")[0]),
    ).toEqual(["rules[0].confirmations", "rules[1].confirmations"]);
  });

  it("watch() refuses a finalized rule without INDEX_RPC_URL before reading anything", async () => {
    const db = await backend.target("finalized-refused");
    const env = { NFT_SOURCE: "index", INDEX_DB: db, EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: join(backend.dir, "x") };
    const config = { from: { Email: "watch@chainmail.test" }, rules: [rule()] };
    await expect(watch({ config, env, once: true })).rejects.toMatchObject({
      details: { violations: [expect.objectContaining({ field: "rules[0].confirmations" })] },
    });
  });
});
