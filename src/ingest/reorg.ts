/**
 * Reorganisations and a chain that moves under a read. The hash of every block that got records (and of every range
 * end) is kept in the store. A range whose first block does not extend the stored tip, or a tip whose hash changed,
 * means a reorganisation: stored hashes are compared with the chain, newest first, down to the common ancestor, and
 * everything above it is deleted, to be indexed again. A range whose logs and headers disagreed is read again after
 * a pause, but not forever against a node that never agrees.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { hexToNumber, RPC_UPSTREAM } from "../chain/index.js";
import { ChainmailError } from "../core/errors.js";
import type { IndexStore } from "../sources/own-index/index.js";
import type { Header, LagWait } from "./completeness.js";
import { BATCH, type Fetcher } from "./fetcher.js";

/** Ranges in a row whose logs and headers may disagree before the run stops. */
const MOVES_IN_A_ROW = 10;

export class Reorgs {
  /** Ranges in a row whose logs and headers disagreed. */
  private inconsistent = 0;

  constructor(
    private readonly store: IndexStore,
    private readonly fetcher: Fetcher,
    private readonly lag: LagWait,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /**
   * Whether the stored tip left the canonical chain (then it has been rolled back). `latest`, the head's header
   * just read, tells without a call where the tip is the head or its parent.
   */
  async tipReorged(latest?: Header): Promise<boolean> {
    const [tip] = await this.store.checkpoints(Number.MAX_SAFE_INTEGER, 1);
    if (!tip) return false;
    const at = latest ? hexToNumber(latest.number) : undefined;
    const known = at === tip.number ? latest?.hash : at === tip.number + 1 ? latest?.parentHash : undefined;
    if (typeof known === "string" && known.toLowerCase() === tip.hash) return false;
    const header = await this.fetcher.header(tip.number);
    // No header is "not there yet" (a lagging backend), which says nothing of a reorg.
    if (!header || header.hash.toLowerCase() === tip.hash) return false;
    return this.rollBack(tip.number);
  }

  /**
   * Whether a range read starting at `from` extends the stored chain (its first block's parent is the stored
   * block before it); when it does not, what the reorg replaced has been rolled back (or is looked at again later).
   */
  async extendsStored(from: number, first: Header | undefined): Promise<boolean> {
    const [last] = await this.store.checkpoints(from - 1, 1);
    if (last && last.number === from - 1 && first && first.parentHash.toLowerCase() !== last.hash) {
      await this.rollBack(from - 1);
      return false;
    }
    return true;
  }

  /**
   * Walks stored hashes back from `below` to the newest one still on the chain and deletes what is above it; false
   * (nothing deleted) when the node has no header for a block on the way yet: it is looked at again later.
   */
  private async rollBack(below: number): Promise<boolean> {
    let from = below;
    for (;;) {
      const stored = await this.store.checkpoints(from, BATCH);
      if (stored.length === 0) {
        await this.store.rollbackTo(Number((await this.store.getMeta("first_block")) ?? "0") - 1);
        return true;
      }
      const headers = await this.fetcher.headers(stored.map((c) => c.number));
      const ancestor = stored.findIndex((c) => headers.get(c.number)?.hash.toLowerCase() === c.hash);
      const unknown = stored.slice(0, ancestor < 0 ? stored.length : ancestor).find((c) => !headers.has(c.number));
      if (unknown) {
        await this.lag.wait(unknown.number, "it answered null for the block's header", async () => below);
        return false;
      }
      if (ancestor >= 0) {
        await this.store.rollbackTo(stored[ancestor]!.number);
        return true;
      }
      from = stored[stored.length - 1]!.number - 1;
    }
  }

  /** The chain moved under the read of `[from, to]`: a pause before it is read again, or an error after too many. */
  async chainMoved(from: number, to: number): Promise<void> {
    if (++this.inconsistent > MOVES_IN_A_ROW) {
      throw new ChainmailError(
        "UPSTREAM_BAD_RESPONSE",
        `The JSON-RPC node at ${this.fetcher.rpc.origin} keeps answering logs that do not match its block hashes (blocks ${from}-${to}).`,
        {
          hint: "A load-balanced endpoint may mix nodes at different heads; use one node or a --safe-depth.",
          details: { upstream: RPC_UPSTREAM, from_block: from, to_block: to },
        },
      );
    }
    await sleep(100 * this.inconsistent, undefined, this.signal ? { signal: this.signal } : undefined);
  }

  /** A range was read consistently: the count of moves in a row starts again. */
  consistent(): void {
    this.inconsistent = 0;
  }
}
