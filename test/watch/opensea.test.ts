/**
 * chainmail watch following OpenSea's order book (the local OpenSea server with real BAYC answers): a token listed
 * below a price is mailed once; with index+opensea, new bids from OpenSea and new sales from the own index reach
 * the same rule; rules a source cannot answer are refused before anything runs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChainmailError } from "../../src/core/errors.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { type ActivityRow, IndexStore } from "../../src/sources/own-index/store.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { parseWatchConfig } from "../../src/watch/config.js";
import { watch } from "../../src/watch/watch.js";
import { OPENSEA_KEY, type OpenSeaEvent, type OpenSeaServer, startOpenSea } from "../upstreams/opensea.js";
import { BAYC, fixture, openseaDataset } from "../upstreams/opensea-data.js";

let upstream: OpenSeaServer;
let dir: string;
const listing = fixture("bayc-listing-events.json").asset_events[0] as Record<string, any>;
const offer = fixture("bayc-offer-events.json").asset_events[0] as Record<string, any>;
/** After every saved event. */
const NOW = 1_764_870_000;

/** A new listing of `token` for `eth` ETH (the first saved listing, moved). */
const listed = (token: string, eth: string, at: number): OpenSeaEvent => ({
  ...listing,
  event_timestamp: at,
  order_hash: `0x${at.toString(16).padStart(64, "0")}`,
  payment: { ...listing.payment, quantity: (BigInt(Math.round(Number(eth) * 1000)) * 10n ** 15n).toString() },
  asset: { ...listing.asset, identifier: token },
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-watch-opensea-"));
  upstream = await startOpenSea(openseaDataset());
});
afterAll(async () => {
  await closeIndexSources();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

function setup(name: string, rule: Record<string, unknown>, source = "opensea") {
  const outbox = join(dir, `${name}-outbox`);
  const env = {
    NFT_SOURCE: source,
    OPENSEA_BASE_URL: upstream.url,
    OPENSEA_API_KEY: OPENSEA_KEY,
    INDEX_DB: join(dir, `${name}.sqlite`),
    EMAIL_TRANSPORT: "outbox",
    OUTBOX_DIR: outbox,
  };
  const config = {
    from: { Email: "watch@chainmail.test" },
    opensea_requests_per_second: 1000,
    rules: [{ id: name, contract_address: BAYC, mail: { to: [{ Email: "desk@example.com" }] }, ...rule }],
  };
  return { outbox, env, config };
}

describe("chainmail watch on OpenSea's order book", () => {
  it("mails a token listed below a price, once; dearer listings and other kinds are not mailed", async () => {
    const w = setup("cheap", { type: ["list"], max_price: { eth: 6.5 } });
    // The first run fixes the rule's start at OpenSea's newest record: the saved history is not mailed.
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(0);
    upstream.add("boredapeyachtclub", [listed("42", "6.25", NOW + 1), listed("43", "7", NOW + 2)]);
    const run = await watch({ config: w.config, env: w.env, once: true });
    expect(run.sent).toBe(1);
    const mails = await listOutbox(w.outbox);
    expect(mails.map((m) => m.subject)).toEqual([
      expect.stringMatching(/^cheap: list of ERC721 0xbc4c…f13d #42 for 6\.25 ETH/),
    ]);
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(0);
  });

  it("index+opensea: new bids from OpenSea and new sales from the own index reach one rule", async () => {
    const w = setup("both", { type: ["bid", "sale"] }, "index+opensea");
    const head = 23_950_000;
    const store = await IndexStore.open(w.env.INDEX_DB);
    await store.setMeta("last_block", String(head));
    await store.noteHead(head);
    await store.close();
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(0);

    // The rule started at the index's head and at this moment: a bid placed now is new.
    const now = Math.floor(Date.now() / 1000) + 5;
    upstream.add("boredapeyachtclub", [
      { ...offer, event_timestamp: now, asset: { ...offer.asset, identifier: "77" } },
    ]);
    const writer = await IndexStore.open(w.env.INDEX_DB);
    const sale: ActivityRow = {
      block_number: head + 1,
      log_index: 0,
      batch_index: 0,
      kind: "sale",
      contract: BAYC,
      token_id: "88",
      from_addr: "0x00000000000000000000000000000000000000a0",
      to_addr: "0x00000000000000000000000000000000000000b0",
      quantity: "1",
      tx_hash: `0x${"88".repeat(32)}`,
      block_hash: `0x${"99".repeat(32)}`,
      timestamp: now - 2,
      contract_type: "ERC721",
      marketplace: "opensea",
      currency: null,
      price: "6.5",
      price_usd: null,
    };
    await writer.insertRows([sale]);
    await writer.setMeta("last_block", String(head + 1));
    await writer.close();

    const run = await watch({ config: w.config, env: w.env, once: true });
    expect(run.sent).toBe(2);
    const subjects = (await listOutbox(w.outbox)).map((m) => m.subject);
    expect(subjects).toEqual([
      expect.stringMatching(/^both: sale of ERC721 0xbc4c…f13d #88 for 6\.5 ETH/),
      expect.stringMatching(/^both: bid of ERC721 0xbc4c…f13d #77 for 9\.94 0xc02a…6cc2/),
    ]);
    expect((await watch({ config: w.config, env: w.env, once: true })).sent).toBe(0);
  });
});

describe("rules a source cannot answer are refused", () => {
  const rule = (extra: Record<string, unknown>) => ({
    from: { Email: "watch@chainmail.test" },
    rules: [{ id: "r", mail: { to: [{ Email: "desk@example.com" }] }, ...extra }],
  });
  const problems = (config: unknown, source?: string) => {
    try {
      parseWatchConfig(config, source);
    } catch (err) {
      return ((err as ChainmailError).details.violations as { field: string; rule: string }[]).map(
        (v) => `${v.field}: ${v.rule}`,
      );
    }
    return [];
  };

  it("the whole chain from OpenSea; bids and listings from the own index alone; both price bounds' units", () => {
    expect(problems(rule({}), "opensea")).toEqual(["rules[0].contract_address: required with source opensea"]);
    expect(problems(rule({ contract_address: BAYC, type: ["list"] }), "index")).toEqual([
      "rules[0].type: bid and list only from nftport, opensea, index+opensea",
    ]);
    expect(
      problems(rule({ contract_address: BAYC, type: ["list"], max_price: { eth: 1, usd: 2 } }), "opensea"),
    ).toEqual(["rules[0].max_price: exactly one of eth, usd"]);
    expect(problems(rule({ contract_address: BAYC, type: ["list", "sale"] }), "index+opensea")).toEqual([]);
    // NFT_SOURCE picks the default source; `source` in the file wins.
    expect(problems({ ...rule({ contract_address: BAYC, type: ["bid"] }), source: "opensea" }, "index")).toEqual([]);
    expect(parseWatchConfig(rule({ contract_address: BAYC }), "index+opensea").source).toBe("index+opensea");
  });
});
