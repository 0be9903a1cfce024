/**
 * src/watch/follow.ts on its own: the pacer that spaces a watch's upstream calls, a rule's fingerprint, where a rule
 * starts (its floor: a start block, the own index's head, NFTPort's newest record by contract or, on the whole
 * chain, by a galloping search), a rule's read through the reader with its source's page size, and how long to hold
 * off after a rate limit. Against a loopback NFTPort and a real SQLite index.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { PageError } from "../../src/core/paginate.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import type { Rule } from "../../src/watch/config.js";
import { type FollowContext, findFloor, fingerprintOf, holdOffMs, Pacer, readRule } from "../../src/watch/follow.js";
import { testConfig } from "../support/helpers.js";
import { type NftportServer, type Rec, startNftport, VALID_KEY } from "../upstreams/nftport.js";

const CONTRACT = "0x5555555555555555555555555555555555555555";
const EMPTY = "0x7777777777777777777777777777777777777777";
const MIXED = "0xAbCdEf0000000000000000000000000000000001";
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const transfer = (block: number): Rec => ({
  type: "transfer",
  transfer_from: "0x00000000000000000000000000000000000000a0",
  transfer_to: "0x00000000000000000000000000000000000000b0",
  contract_address: CONTRACT,
  token_id: String(block),
  quantity: 1,
  transaction_hash: hash(block),
  block_hash: hash(block * 11),
  block_number: block,
  transaction_date: new Date(Date.UTC(2023, 0, 1) + block * 12_000).toISOString().slice(0, 19),
});
const rule = (fields: Partial<Rule>) => ({ id: "r", kind: "by-contract", type: ["transfer"], ...fields }) as Rule;
const aborted = () => AbortSignal.abort();

let server: NftportServer;
let dir: string;
let ctx: FollowContext;

beforeAll(async () => {
  // Blocks 3, 70, 71 and 1000: the galloping search must find 1000 between 512 and 1024.
  server = await startNftport({ byContract: new Map([[CONTRACT, [3, 70, 71, 1000].map(transfer)]]) });
  dir = mkdtempSync(join(tmpdir(), "chainmail-follow-"));
  ctx = {
    config: testConfig({ NFTPORT_BASE_URL: server.url, NFTPORT_API_KEY: VALID_KEY }),
    source: "nftport",
    reorgDepth: 12,
  };
});
afterAll(async () => {
  await server.close();
  await closeIndexSources();
  rmSync(dir, { recursive: true, force: true });
});

describe("Pacer", () => {
  it("lets the first call through at once and makes the next wait its interval (an aborted wait rejects)", async () => {
    const pacer = new Pacer(1);
    await expect(pacer.wait(aborted())).resolves.toBeUndefined();
    await expect(pacer.wait(aborted())).rejects.toMatchObject({ name: "AbortError" });
  });

  it("holds every call back until the time given after a rate limit, and not for a time already past", async () => {
    const held = new Pacer(1000);
    held.pauseUntil(Date.now() + 60_000);
    await expect(held.wait(aborted())).rejects.toMatchObject({ name: "AbortError" });
    const past = new Pacer(1000);
    past.pauseUntil(Date.now() - 60_000);
    await expect(past.wait(aborted())).resolves.toBeUndefined();
  });
});

describe("fingerprintOf", () => {
  it("reads the source, the retriever, the contract in lower case and the token as the rule's read", () => {
    const byContract = rule({ contract_address: MIXED });
    expect(fingerprintOf(byContract, { source: "nftport" })).toBe(
      JSON.stringify(["nftport", "by-contract", MIXED.toLowerCase(), null]),
    );
    const token = rule({ kind: "by-token", contract_address: CONTRACT, token_id: "7" });
    expect(fingerprintOf(token, { source: "index" })).toBe(JSON.stringify(["index", "by-token", CONTRACT, "7"]));
    expect(fingerprintOf(byContract, { source: "opensea" })).not.toBe(fingerprintOf(byContract, { source: "nftport" }));
    // What is not read (the type filter, the mail) is not in it.
    expect(fingerprintOf({ ...byContract, type: ["sale"] }, { source: "nftport" })).toBe(
      fingerprintOf(byContract, { source: "nftport" }),
    );
  });

  it("adds `contracts` only when the rule has them, in lower case, sorted and once each", () => {
    const base = rule({ kind: "on-chain" });
    const listed = { ...base, contracts: [EMPTY, MIXED, EMPTY, CONTRACT] };
    expect(fingerprintOf(listed, { source: "index" })).toBe(
      JSON.stringify(["index", "on-chain", null, null, [CONTRACT, EMPTY, MIXED.toLowerCase()]]),
    );
    expect(fingerprintOf(base, { source: "index" })).toBe(JSON.stringify(["index", "on-chain", null, null]));
  });
});

describe("findFloor", () => {
  it("reads a start block as the block before it, rows without a block from now", async () => {
    const before = new Date().toISOString().slice(0, 19);
    const floor = await findFloor(rule({ contract_address: CONTRACT, start_block: 70 }), ctx);
    expect(floor?.block).toBe(69);
    expect(floor!.date >= before).toBe(true);
  });

  it("reads NFTPort's newest record of a contract as the floor, and nothing yet as no floor", async () => {
    expect(await findFloor(rule({ contract_address: CONTRACT }), ctx)).toEqual({
      block: 1000,
      date: transfer(1000).transaction_date,
    });
    expect(await findFloor(rule({ contract_address: EMPTY }), ctx)).toEqual({ block: undefined, date: "" });
  });

  it("finds the whole chain's newest record by a galloping search on from_block", async () => {
    const from = server.requests.length;
    expect((await findFloor(rule({ kind: "on-chain" }), ctx))?.block).toBe(1000);
    const asked = server.requests.slice(from).map((r) => Number(r.query.get("from_block")));
    expect(asked.slice(0, 12)).toEqual([0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
    expect(asked.length).toBeLessThan(40);
  });

  it("reads the own index's head, or its last block when later; none until its writer has seen the chain", async () => {
    const db = join(dir, "index.sqlite");
    const index = { ...ctx, source: "index" as const, config: testConfig({ NFT_SOURCE: "index", INDEX_DB: db }) };
    expect(await findFloor(rule({ contract_address: CONTRACT }), index)).toBeUndefined();
    const store = await IndexStore.open(db);
    try {
      expect(await findFloor(rule({ contract_address: CONTRACT }), index)).toBeUndefined();
      await store.noteHead(500);
      expect((await findFloor(rule({ contract_address: CONTRACT }), index))?.block).toBe(500);
      await store.setMeta("last_block", "520");
      expect((await findFloor(rule({ kind: "on-chain" }), { ...index, source: "index+opensea" }))?.block).toBe(520);
    } finally {
      await store.close();
    }
  });
});

describe("readRule", () => {
  it("reads the rule's records from the horizon on, oldest first, at its source's page size", async () => {
    const from = server.requests.length;
    const batches = [];
    for await (const batch of readRule(rule({ contract_address: CONTRACT }), { block: 70, date: "" }, ctx)) {
      batches.push(batch);
    }
    expect(batches.flatMap((b) => b.records).map((r) => (r as unknown as Rec).block_number)).toEqual([70, 71, 1000]);
    expect(server.requests.slice(from).map((r) => r.query.get("page_size"))).toEqual(["50"]);
  });
});

describe("holdOffMs", () => {
  const rateLimited = (headers: Record<string, string>) =>
    new PageError({ error: "too many requests", details: { code: "upstream_rate_limited" } }, { headers }, undefined);

  it("holds off a rate limit's Retry-After, a minute without one, and not at all after other failures", () => {
    expect(holdOffMs(rateLimited({ "retry-after": "7" }))).toBe(7000);
    expect(holdOffMs(rateLimited({}))).toBe(60_000);
    const other = new PageError({ error: "down", details: { code: "upstream_server_error" } }, undefined, undefined);
    expect(holdOffMs(other)).toBeUndefined();
    expect(holdOffMs(new ChainmailError("UPSTREAM_RATE_LIMITED", "not a page"))).toBeUndefined();
    expect(holdOffMs(new Error("boom"))).toBeUndefined();
  });
});
