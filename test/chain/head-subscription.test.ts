/**
 * Following the head by subscription (head-subscription.ts) against anvil's `eth_subscribe` `newHeads`, through a
 * proxy that can cut the WebSocket: a new block is indexed without waiting the poll interval, and when the
 * subscription drops the indexer polls, missing no block, until it subscribes again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HeadMode } from "../../src/chain/head-subscription.js";
import { subscriptionUrl } from "../../src/chain/head-subscription.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { type ActivityRow, IndexStore } from "../../src/sources/own-index/store.js";
import { testConfig } from "../support/helpers.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, address, erc721Transfer, installEmitters, startAnvil } from "../support/index-helpers.js";
import { startTcpProxy, type TcpProxy } from "../upstreams/tcp-proxy.js";

const NFT = address(0x721);
const ALICE = address(0xa11ce);
const ZERO = address(0);

let anvil: Anvil;
let backend: IndexBackend;
let proxy: TcpProxy;

beforeAll(async () => {
  backend = await openBackend("heads");
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT]);
  proxy = await startTcpProxy(anvil.rpcUrl);
});

afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
  await backend?.close();
});

const rows = async (db: string): Promise<ActivityRow[]> => {
  const store = await IndexStore.open(db);
  try {
    return await store.page({ direction: "asc", limit: 100_000 });
  } finally {
    await store.close();
  }
};

/** An indexer following the proxy: its head modes and progress as events a test can await. */
function follow(db: string, pollIntervalMs: number) {
  const stop = new AbortController();
  const modes: HeadMode[] = [];
  const waiters: { check: () => boolean; resolve: () => void }[] = [];
  let indexed = -1;
  let looks = 0;
  const settle = () => {
    for (const w of [...waiters]) {
      if (w.check()) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const when = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      waiters.push({ check, resolve });
      settle();
    });
  const running = indexChain({
    rpcUrl: proxy.url,
    dbPath: db,
    follow: true,
    pollIntervalMs,
    signal: stop.signal,
    onHeadMode: (mode) => {
      modes.push(mode);
      settle();
    },
    onProgress: (p) => {
      looks++;
      indexed = Math.max(indexed, p.block);
      settle();
    },
  });
  return {
    modes,
    mode: (mode: HeadMode, count = 1) => when(() => modes.filter((m) => m === mode).length >= count),
    indexed: (block: number) => when(() => indexed >= block),
    /** Until the indexer has looked at the head `count` more times. */
    looks: (count: number) => {
      const until = looks + count;
      return when(() => looks >= until);
    },
    stop: async () => {
      stop.abort();
      return running;
    },
  };
}

describe("following the head by subscription", () => {
  it("derives the WebSocket address from the endpoint's", () => {
    expect(subscriptionUrl("http://127.0.0.1:8545")).toBe("ws://127.0.0.1:8545/");
    expect(subscriptionUrl("https://eth.example/v2/key?x=1")).toBe("wss://eth.example/v2/key?x=1");
  });

  it("indexes a new block when the node announces it, not at the next poll", async () => {
    const db = await backend.target("subscribed");
    // A poll an hour away: the block can only be indexed in time because the subscription announced it.
    const indexer = follow(db, 3_600_000);
    try {
      await indexer.mode("subscription");
      const { blockNumber } = await erc721Transfer(anvil, NFT, ZERO, ALICE, 1);
      await indexer.indexed(blockNumber);
      const { blockNumber: next } = await erc721Transfer(anvil, NFT, ZERO, ALICE, 2);
      await indexer.indexed(next);
    } finally {
      await indexer.stop();
    }
    expect((await rows(db)).map((r) => r.token_id)).toEqual(["1", "2"]);
    expect(indexer.modes).toEqual(["subscription"]);
  });

  it("subscribes at INDEX_RPC_WS_URL when it is set, whatever the endpoint's address", async () => {
    const opened = proxy.socketsOpened;
    const stop = new AbortController();
    const modes: HeadMode[] = [];
    let subscribed: () => void = () => undefined;
    const isSubscribed = new Promise<void>((resolve) => {
      subscribed = resolve;
    });
    const running = indexChain({
      rpcUrl: anvil.rpcUrl,
      dbPath: await backend.target("ws-setting"),
      follow: true,
      pollIntervalMs: 3_600_000,
      signal: stop.signal,
      config: testConfig({ INDEX_RPC_WS_URL: proxy.url.replace("http:", "ws:") }),
      onHeadMode: (mode) => {
        modes.push(mode);
        if (mode === "subscription") subscribed();
      },
    });
    await Promise.race([isSubscribed, running]);
    stop.abort();
    await running;
    expect(modes).toEqual(["subscription"]);
    expect(proxy.socketsOpened).toBe(opened + 1);
  });

  it("stays subscribed while the chain is idle: polls that find no new head are no sign of a dead subscription", async () => {
    const db = await backend.target("idle");
    const indexer = follow(db, 10);
    try {
      await indexer.mode("subscription");
      await indexer.looks(30);
    } finally {
      await indexer.stop();
    }
    expect(indexer.modes).toEqual(["subscription"]);
  });

  it("falls back to polling when the WebSocket drops, skips no block, and subscribes again", async () => {
    const db = await backend.target("dropped");
    const indexer = follow(db, 50);
    const tokens: string[] = [];
    try {
      await indexer.mode("subscription");
      const opened = proxy.socketsOpened;
      proxy.refuseSockets = true;
      proxy.dropSockets();
      await indexer.mode("polling");
      // Blocks made while only polling finds them, several before it looks.
      let last = 0;
      for (let id = 10; id < 15; id++) {
        last = (await erc721Transfer(anvil, NFT, ZERO, ALICE, id)).blockNumber;
        tokens.push(String(id));
      }
      await indexer.indexed(last);
      proxy.refuseSockets = false;
      await indexer.mode("subscription", 2);
      expect(proxy.socketsOpened).toBeGreaterThan(opened);
      last = (await erc721Transfer(anvil, NFT, ZERO, ALICE, 20)).blockNumber;
      tokens.push("20");
      await indexer.indexed(last);
    } finally {
      await indexer.stop();
    }
    const indexed = await rows(db);
    // Every transfer of the chain so far, in block order: the two of the first test, then these.
    expect(indexed.map((r) => r.token_id)).toEqual(["1", "2", ...tokens]);
    expect(indexer.modes.slice(0, 3)).toEqual(["subscription", "polling", "subscription"]);
  });
});
