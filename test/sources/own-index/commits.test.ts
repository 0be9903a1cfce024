/**
 * Commit signals of an index (src/sources/own-index/commits.ts) on their own, over real SQLite files: a reader in
 * the writer's process is woken by each commit and rollback at once, whatever path names the index, once per
 * cursor however many ways it hears of it; a wait ends false at its deadline, on abort or on close. (A reader in
 * another process, through `data_version` or PostgreSQL's NOTIFY, is test/watch/wake.test.ts's.)
 */
import { relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announceCommit, IndexCommits } from "../../../src/sources/own-index/commits.js";
import { IndexStore } from "../../../src/sources/own-index/store.js";
import { type IndexBackend, openBackend } from "../../support/index-backend.js";

const HOUR_MS = 3_600_000;
let backend: IndexBackend;
let opened = 0;

beforeAll(async () => {
  backend = await openBackend("index-commits");
});
afterAll(async () => {
  await backend?.close();
});

/** A fresh index with a cursor, and a reader listening to it. */
async function writerAndReader() {
  const target = await backend.target(`commits-${opened++}`);
  const store = await IndexStore.open(target);
  await store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 1 });
  const commits = await IndexCommits.open(target);
  // The commit before the reader opened is not news.
  expect(await commits.wait(0)).toBe(false);
  return { target, store, commits };
}

describe("a reader in the writer's process", () => {
  it("is woken at once by each commit and each rollback, and not again for the same one", async () => {
    const { store, commits } = await writerAndReader();
    try {
      const waiting = commits.wait(HOUR_MS);
      const started = Date.now();
      await store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 2 });
      expect(await waiting).toBe(true);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await commits.wait(0)).toBe(false);
      await store.rollbackTo(1);
      expect(await commits.wait(HOUR_MS)).toBe(true);
      expect(await commits.wait(100)).toBe(false);
    } finally {
      await commits.close();
      await store.close();
    }
  });

  it("hears one index however its path is written, and not another index's commits", async () => {
    const { target, store, commits } = await writerAndReader();
    const other = await writerAndReader();
    try {
      announceCommit(relative(process.cwd(), target), 5);
      expect(await commits.wait(HOUR_MS)).toBe(true);
      await other.store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 9 });
      expect(await commits.wait(100)).toBe(false);
      expect(await other.commits.wait(0)).toBe(true);
    } finally {
      await Promise.all([commits.close(), other.commits.close()]);
      await Promise.all([store.close(), other.store.close()]);
    }
  });

  it("wakes once for a cursor heard twice (in this process and through the file)", async () => {
    const { target, store, commits } = await writerAndReader();
    try {
      await store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 3 });
      announceCommit(target, 3);
      expect(await commits.wait(HOUR_MS)).toBe(true);
      expect(await commits.wait(200)).toBe(false);
    } finally {
      await commits.close();
      await store.close();
    }
  });
});

describe("the end of a wait without a commit", () => {
  it("comes at the deadline, on abort, and on close", async () => {
    const { store, commits } = await writerAndReader();
    try {
      let started = Date.now();
      expect(await commits.wait(150)).toBe(false);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);

      const abort = new AbortController();
      started = Date.now();
      setTimeout(() => abort.abort(), 50);
      expect(await commits.wait(HOUR_MS, abort.signal)).toBe(false);
      expect(Date.now() - started).toBeLessThan(1_000);

      const waiting = commits.wait(HOUR_MS);
      await commits.close();
      expect(await waiting).toBe(false);
      // A closed reader hears nothing more.
      await store.commitRange({ records: [], blocks: [], answers: [], lastBlock: 4 });
      expect(await commits.wait(HOUR_MS)).toBe(false);
    } finally {
      await commits.close();
      await store.close();
    }
  });
});
