/**
 * One walk through OpenSea's pages of one query: what makes a walk end and hand out each event once, whatever
 * cursors OpenSea answers.
 *
 * - Every cursor of the walk is kept (the one asked with and every `next` answered), so a `next` OpenSea gave
 *   before is caught however long its cycle is (A→A, A→B→A, A→B→C→A…): `upstream_bad_response`, `field: "next"`.
 *   A finite set of cursors can then only be read once each: the walk always ends.
 * - The identity of every record handed out on an earlier page is kept, so an event OpenSea repeats under a fresh
 *   cursor is handed out once. Its identity is the record it gives (what a reader sees), before the node's blocks
 *   and USD prices are added; equal records on one page are all kept (two equal transfers in one transaction).
 *
 * A walk lasts as long as the paging that asks for it: `pages`, `records`, the CLI's `--all` and the workflow hosts
 * keep one for their pages (`RunContext.walk`, created by core/paginate.ts); a single call (the HTTP service, one
 * `runNode`) walks alone, and its continuation carries the tag of the cursor before it, so a cycle of one or two is
 * caught across calls too. Memory: a cursor per page read and 16 characters per record handed out.
 */
import { createHash } from "node:crypto";
import { ChainmailError } from "../../core/errors.js";
import { stringifyJson } from "../../core/json.js";
import type { RunContext } from "../../core/node.js";
import type { RawResponse } from "../../schemas/common.js";
import { UPSTREAM } from "./client.js";
import { tagOf } from "./continuation.js";
import type { Mapped } from "./events.js";

export class OpenSeaWalk {
  /** Every cursor asked with or answered in this walk; `""` is the first page. */
  private readonly cursors = new Set<string>();
  /** The identities of the records handed out on earlier pages. */
  private readonly handedOut = new Set<string>();

  /**
   * Reads the page asked with `cursor` (undefined: the first page), whose continuation said the cursor before it
   * had tag `previous`, and which answered `next`: its records not handed out before, or the error of a `next` that
   * was seen before.
   */
  page(
    cursor: string | undefined,
    previous: string,
    next: string | undefined,
    mapped: readonly Mapped[],
    response: RawResponse,
  ): Mapped[] | ChainmailError {
    const here = cursor ?? "";
    this.cursors.add(here);
    if (next !== undefined && (this.cursors.has(next) || tagOf(next) === previous)) return loop(response);
    if (next !== undefined) this.cursors.add(next);
    const ids = mapped.map((m) => identityOf(m));
    const fresh = mapped.filter((_, i) => !this.handedOut.has(ids[i]!));
    for (const id of ids) this.handedOut.add(id);
    return fresh;
  }
}

/** The walk of this query in the paging `ctx` belongs to, or a walk of its own for a single call. */
export function walkOf(ctx: RunContext, fingerprint: string): OpenSeaWalk {
  const memory = ctx.walk;
  if (!memory) return new OpenSeaWalk();
  const key = `opensea|${fingerprint}`;
  let walk = memory.get(key);
  if (!(walk instanceof OpenSeaWalk)) {
    walk = new OpenSeaWalk();
    memory.set(key, walk);
  }
  return walk as OpenSeaWalk;
}

/** A record's identity: a digest of the record as written (96 bits: no two records of a walk share one). */
const identityOf = (mapped: Mapped): string =>
  createHash("sha256").update(stringifyJson(mapped.record)).digest("base64url").slice(0, 16);

function loop(response: RawResponse): ChainmailError {
  return new ChainmailError(
    "UPSTREAM_BAD_RESPONSE",
    "OpenSea answered a next cursor it had already given (a loop); stopped rather than read the same events again.",
    {
      hint: "Try again later; if it persists, the events after this point cannot be read from OpenSea.",
      details: { upstream: UPSTREAM, status: response.status, field: "next" },
    },
  );
}
