/**
 * chainmail watch on NFTPort (the local NFTPort-compatible server): new records found by paging down to the
 * horizon, calls spaced at the configured rate, and a persistent 429 honoured with its Retry-After.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { PagesMoved, READ_BATCH } from "../../src/watch/follow.js";
import { watch } from "../../src/watch/watch.js";
import { captureLogger } from "../support/watch-helpers.js";
import { FAULTS, type NftportServer, type Rec, startNftport, VALID_KEY } from "../upstreams/nftport.js";

const CONTRACT = "0x4444444444444444444444444444444444444444";
let server: NftportServer;
let dir: string;

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const sale = (block: number, tokenId: number, price: number, contract = CONTRACT): Rec => ({
  type: "sale",
  buyer_address: "0x00000000000000000000000000000000000000b0",
  seller_address: "0x00000000000000000000000000000000000000a0",
  nft: { contract_type: "ERC721", contract_address: contract, token_id: String(tokenId) },
  quantity: 1,
  price_details: { asset_type: "ETH", price, price_usd: price * 2000 },
  transaction_hash: hash(block * 7),
  block_hash: hash(block * 11),
  block_number: block,
  transaction_date: new Date(Date.UTC(2023, 0, 1) + block * 12_000).toISOString().slice(0, 19),
  marketplace: "opensea",
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-watch-nftport-"));
  // 120 records of history: a first start must not page through them.
  server = await startNftport({
    byContract: new Map([[CONTRACT, Array.from({ length: 120 }, (_, i) => sale(1000 + i, i, 1))]]),
  });
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function setup(name: string, extra: Record<string, unknown> = {}, envExtra: Record<string, string> = {}) {
  const outbox = join(dir, `${name}-outbox`);
  const env = {
    NFT_SOURCE: "nftport",
    NFTPORT_BASE_URL: server.url,
    NFTPORT_API_KEY: VALID_KEY,
    INDEX_DB: join(dir, `${name}.sqlite`),
    EMAIL_TRANSPORT: "outbox",
    OUTBOX_DIR: outbox,
    CHAINMAIL_RETRY_BASE_MS: "10",
    ...envExtra,
  };
  const config = {
    from: { Email: "watch@chainmail.test" },
    poll_seconds: 0.05,
    rules: [{ id: name, contract_address: CONTRACT, mail: { to: [{ Email: "desk@example.com" }] } }],
    ...extra,
  };
  return { outbox, env, config };
}

describe("chainmail watch on NFTPort", () => {
  it("mails new sales, reading only the newest pages", async () => {
    const w = setup("follow");
    await watch({ config: w.config, env: w.env, once: true });
    const before = server.requests.length;
    server.add(CONTRACT, [sale(2000, 500, 3), sale(2001, 501, 4)]);
    const run = await watch({ config: w.config, env: w.env, once: true });
    expect(run.sent).toBe(2);
    expect((await listOutbox(w.outbox)).map((m) => m.subject)).toEqual([
      expect.stringContaining("#500 for 3 ETH"),
      expect.stringContaining("#501 for 4 ETH"),
    ]);
    // One page of 50 reaches below the horizon: the 120-record history is not read.
    expect(server.requests.length - before).toBe(1);
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(0);
  });

  it("a catch-up longer than a read holds is read again oldest first; pages that moved end the read, the next poll goes on", async () => {
    const contract = "0x5555555555555555555555555555555555555555";
    const history = Array.from({ length: READ_BATCH + 200 }, (_, i) => sale(5000 + i, i, 1, contract));
    server.add(contract, history);
    const w = setup("catchup", {
      nftport_requests_per_second: 1000,
      rules: [
        {
          id: "catchup",
          contract_address: contract,
          start_block: 5000,
          mode: "digest",
          digest: { records: 1 },
          mail: { to: [{ Email: "desk@example.com" }] },
        },
      ],
    });
    // Paging down: 24 full pages of 50 and an empty one. Then the pages again, deepest first: after 21 of them the
    // first batch (1,000 records) is taken, and while the 22nd is asked for, two new sales arrive on top. The test
    // server's continuations count rows, so that page now holds other records.
    const pagingDown = Math.ceil(history.length / 50) + 1;
    const firstBatch = pagingDown + Math.ceil((READ_BATCH + 1) / 50);
    const start = server.requests.length;
    server.fault({ after: firstBatch, delayMs: 300 });
    const logger = captureLogger();
    const running = watch({ config: w.config, env: w.env, once: true, logger });
    while (server.requests.length <= start + firstBatch) await sleep(5);
    server.add(contract, [sale(9000, 9000, 2, contract), sale(9001, 9001, 2, contract)]);
    await running;
    expect(logger.lines.filter((l) => l.msg === "new records").map((l) => l.records)).toEqual([READ_BATCH]);
    expect(logger.lines.map((l) => l.msg)).toContain(new PagesMoved().message);

    await watch({ config: w.config, env: w.env, once: true, logger });
    expect((await watch({ config: w.config, env: w.env, once: true, logger })).sent).toBe(0);
    const digests = await listOutbox(w.outbox);
    const tokens: number[] = [];
    for (const d of digests) {
      const text = (await simpleParser(await readFile(join(w.outbox, d.file)))).text ?? "";
      tokens.push(...[...text.matchAll(/#(\d+) for/g)].map((m) => Number(m[1])));
    }
    expect(tokens).toEqual([...history.map((_, i) => i), 9000, 9001]);
  });

  it("spaces its calls at nftport_requests_per_second and holds off for a 429's Retry-After", async () => {
    const w = setup("paced", { nftport_requests_per_second: 10 }, { NFTPORT_MAX_RETRIES: "0" });
    await watch({ config: w.config, env: w.env, once: true });
    const controller = new AbortController();
    const logger = captureLogger();
    const start = server.requests.length;
    server.fault(FAULTS.rateLimited("1"));
    const running = watch({ config: w.config, env: w.env, signal: controller.signal, logger });
    await new Promise((r) => setTimeout(r, 1800));
    controller.abort();
    await running;
    const times = server.requests.slice(start).map((r) => r.at);
    // The 429, then nothing for a second (Retry-After: 1), then polls at most 10 per second.
    const limited = logger.lines.find((l) => l.code === "upstream_rate_limited");
    expect(limited?.retry_in_ms).toBe(1000);
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(990);
    // Starts are 100 ms apart; arrivals jitter with the event loop, so count per second rather than per gap.
    const after = times.slice(1);
    for (const t of after) expect(after.filter((u) => u >= t && u < t + 1000).length).toBeLessThanOrEqual(11);
    expect(after.length).toBeLessThanOrEqual(11);
  });

  it("nothing before a rule's start block is ever mailed, late records in the re-read window included (by contract and chain-wide)", async () => {
    const contract = "0x6666666666666666666666666666666666666666";
    server.add(
      contract,
      Array.from({ length: 11 }, (_, i) => sale(9000 + i, 900 + i, 1, contract)),
    );
    const mail = { to: [{ Email: "desk@example.com" }] };
    const w = setup("start-bound", {
      rules: [
        { id: "contract", contract_address: contract, start_block: 9008, mail },
        { id: "chain", start_block: 9008, mail },
      ],
    });
    const tokens = async () => (await listOutbox(w.outbox)).map((m) => String(m.subject).match(/#(\d+)/)?.[1]).sort();
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(6);
    expect(await tokens()).toEqual(["908", "908", "909", "909", "910", "910"]);
    // Late records of blocks before the start (within 12 blocks of the newest: read again), and one after it.
    server.add(contract, [sale(9005, 805, 1, contract), sale(9007, 807, 1, contract), sale(9011, 911, 1, contract)]);
    for (let poll = 0; poll < 3; poll++) await watch({ config: w.config, env: w.env, once: true });
    expect(await tokens()).toEqual(["908", "908", "909", "909", "910", "910", "911", "911"]);
  });

  it("a rule over several contracts reads the chain once per poll, kept to its contracts, wallets, marketplaces and quantity", async () => {
    const [a, b, c] = ["0x7a", "0x7b", "0x7c"].map((p) => p.padEnd(42, "0"));
    const whale = "0x00000000000000000000000000000000000000b0";
    const other = { buyer_address: "0x00000000000000000000000000000000000000c0" };
    server.add(a!, [
      sale(9600, 1, 1, a),
      { ...sale(9601, 2, 1, a), ...other },
      { ...sale(9602, 3, 1, a), quantity: 5 },
    ]);
    server.add(b!, [sale(9600, 4, 1, b), { ...sale(9603, 5, 1, b), marketplace: "blur" }]);
    server.add(c!, [sale(9601, 6, 1, c)]);
    const w = setup("contracts", {
      rules: [
        {
          id: "contracts",
          contracts: [a, b],
          wallets: [whale],
          side: "buyer",
          marketplaces: ["opensea"],
          start_block: 9600,
          mail: { to: [{ Email: "desk@example.com" }] },
        },
      ],
    });
    const before = server.requests.length;
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(3);
    const tokens = (await listOutbox(w.outbox)).map((m) => String(m.subject).match(/#(\d+)/)?.[1]).sort();
    expect(tokens).toEqual(["1", "3", "4"]);
    // One chain-wide page covers every contract of the rule.
    expect(server.requests.slice(before).every((r) => !r.path.includes(a!) && !r.path.includes(b!))).toBe(true);
    expect(server.requests.length - before).toBe(1);
    const min = setup("min-quantity", {
      rules: [
        {
          id: "min-quantity",
          contracts: [a],
          min_quantity: 2,
          start_block: 9600,
          mail: { to: [{ Email: "d@example.com" }] },
        },
      ],
    });
    await watch({ config: min.config, env: min.env, once: true });
    expect((await listOutbox(min.outbox)).map((m) => String(m.subject).match(/#(\d+)/)?.[1])).toEqual(["3"]);
  });

  it('group "transaction": one email per transaction of the records the rule wants (count, every token id, total price), once', async () => {
    const contract = "0x7d".padEnd(42, "0");
    const sweep = [1, 2, 3].map((id) => ({ ...sale(9700, id, 0.25 * id, contract), transaction_hash: hash(97_001) }));
    server.add(contract, [...sweep, sale(9701, 4, 1, contract), { ...sale(9702, 5, 1, contract), type: "transfer" }]);
    const w = setup("sweeps", {
      rules: [
        {
          id: "sweeps",
          contract_address: contract,
          start_block: 9700,
          group: "transaction",
          mail: { to: [{ Email: "desk@example.com" }], text: "{{var:count}}|{{var:token_ids}}|{{var:total_price}}" },
        },
      ],
    });
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(2);
    const mails = await listOutbox(w.outbox);
    // The tokens in the order the source gives the records of one block.
    expect(mails.map((m) => m.subject)).toEqual([
      `sweeps: 3 sales of 0x7d00…0000 #3, #2, #1 for 1.5 ETH ($3,000) on opensea in 0x0000…${hash(97_001).slice(-4)}`,
      `sweeps: 1 sale of 0x7d00…0000 #4 for 1 ETH ($2,000) on opensea in 0x0000…${hash(9701 * 7).slice(-4)}`,
    ]);
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(0);
  });
});
