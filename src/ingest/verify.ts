/**
 * Making sure near the head, where the user asks for it: a backend part-way through a fresh block can answer only
 * some of its logs, by range and by block hash alike, and nothing in the answer shows it (a block's `logsBloom` is
 * of all its logs, not only the watched ones: a partial answer fits in it as the whole one does). So, for each block
 * of a range within the head window (completeness.ts's HEAD_CHECK_DEPTH blocks):
 * - `verifyHead` (`--verify-head`): the answer's watched logs are counted against the block's receipts, which hold
 *   every log of their transactions. Every block whose bloom may hold a watched log is checked, not only those
 *   whose answer looks odd: a partial answer does not look odd. Receipts holding more logs than the answer are the
 *   block's logs (a single-block range takes them; a longer one is read again with that block apart); fewer, or
 *   receipts not shown whole, and the block is read again after a pause (completeness.ts's LagWait).
 * - `verifyRpcUrl` (`--verify-rpc`): a second endpoint is asked the same logs of the window, and the two must agree
 *   block by block, on the number of watched logs and the block's hash (a quorum of two). A block they disagree on
 *   is never stored: it is read again after a pause, until they agree or the wait's budget is spent. A second
 *   endpoint that cannot be read stops the run, naming it: it is never skipped.
 */

import type { ResultSlices } from "../chain/index.js";
import {
  hexToNumber,
  isBeyondHead,
  isBloom,
  isUnknownBlock,
  RangeTooSlow,
  RPC_UPSTREAM,
  RpcAnswerTooLarge,
  type RpcClient,
  RpcError,
  rangeRefusal,
} from "../chain/index.js";
import { urlProblem } from "../core/env.js";
import { ChainmailError } from "../core/errors.js";
import { type Checked, HEAD_CHECK_DEPTH, type Header, readReceipts, STANDS, type Watch } from "./completeness.js";
import type { RawLog } from "./decode.js";
import { type LogFilter, logsFilter } from "./fetcher.js";
import type { NotYet } from "./range-facts.js";

/** The indexer's options that ask for it (indexer.ts's `IndexChainOptions`). */
export interface VerifyOptions {
  /** Check the watched logs of each block near the head against its receipts (`--verify-head`). */
  verifyHead?: boolean | undefined;
  /** A second JSON-RPC endpoint that must agree on the watched logs of each block near the head (`--verify-rpc`). */
  verifyRpcUrl?: string | undefined;
}

/** The longest second endpoint's URL taken: a provider's URL with its key is far shorter. */
export const MAX_VERIFY_URL = 2_048;
/** Blocks whose receipts are asked for at once. */
const RECEIPTS_AT_ONCE = 4;

/** Why `url` cannot be the second endpoint beside `rpcUrl`; undefined when it can. Never quotes the URL (a key). */
export function verifyRpcProblem(url: unknown, rpcUrl: string | undefined): string | undefined {
  const absolute = "must be an absolute http:// or https:// URL";
  if (typeof url !== "string") return absolute;
  if (url.length > MAX_VERIFY_URL) return `must be at most ${MAX_VERIFY_URL} characters`;
  // The form every URL setting has (core/env.ts), in printable ASCII only: nothing the URL parser would quietly mend.
  if (!/^[!-~]+$/.test(url) || urlProblem(url) !== undefined) return absolute;
  const parsed = new URL(url);
  if (rpcUrl !== undefined && URL.canParse(rpcUrl) && new URL(rpcUrl).href === parsed.href) {
    return "names the endpoint being indexed: the second endpoint must be another one";
  }
  return undefined;
}

/** The library's check of the options, before anything is opened: `invalid_input` naming the option. */
export function checkVerifyOptions(options: VerifyOptions & { rpcUrl: string }): void {
  if (options.verifyHead !== undefined && typeof options.verifyHead !== "boolean") {
    throw invalid("verifyHead", "must be true or false");
  }
  if (options.verifyRpcUrl === undefined) return;
  const problem = verifyRpcProblem(options.verifyRpcUrl, options.rpcUrl);
  if (problem) throw invalid("verifyRpcUrl", problem);
}

function invalid(field: string, reason: string): ChainmailError {
  return new ChainmailError("INVALID_INPUT", `${field} is invalid: ${reason}.`, { details: { field, reason } });
}

/** A range as read, for the check: its blocks' headers and the answer's logs and hash of each block. */
export interface ReadForCheck {
  from: number;
  to: number;
  /** The chain's head the range was planned at. */
  head: number;
  headers: ReadonlyMap<number, Header>;
  /** The hash of each block the answer has logs of, lower case. */
  blocks: ReadonlyMap<number, string>;
  /** The answer's logs of each block. */
  perBlock: ReadonlyMap<number, number>;
}

/** What `HeadVerifier` is built from besides the options (indexer.ts). */
export interface VerifierParts {
  /** The endpoint indexed. */
  rpc: RpcClient;
  /** A client of the second endpoint, made like the first one's. */
  client: (url: string) => RpcClient;
  watch: Watch;
  filter: LogFilter;
  /** Headers the range's read did not hold (fetcher.ts). */
  headers: (numbers: number[]) => Promise<Map<number, Header>>;
  notice: ((message: string) => void) | undefined;
}

export class HeadVerifier {
  private constructor(
    private readonly parts: VerifierParts,
    private readonly receipts: boolean,
    private readonly second: RpcClient | undefined,
  ) {}

  /** The verifier the options ask for; undefined when they ask for none. */
  static of(options: VerifyOptions, parts: VerifierParts): HeadVerifier | undefined {
    if (!options.verifyHead && options.verifyRpcUrl === undefined) return undefined;
    const second = options.verifyRpcUrl === undefined ? undefined : parts.client(options.verifyRpcUrl);
    return new HeadVerifier(parts, options.verifyHead === true, second);
  }

  /**
   * Checks the range's blocks within the head window: they stand as read; the range is to be read again (a cut,
   * a block not complete yet); or, for a single-block range whose answer left logs out, the block's watched logs
   * from its receipts replace the answer's.
   */
  async check(range: ReadForCheck): Promise<Checked> {
    const first = Math.max(range.from, range.head - HEAD_CHECK_DEPTH + 1);
    if (first > range.to) return STANDS;
    let perBlock = range.perBlock;
    let outcome = STANDS;
    if (this.receipts) {
      outcome = await this.againstReceipts(range, first);
      if (outcome.kind === "cut" || outcome.kind === "not yet") return outcome;
      if (outcome.kind === "replaced") perBlock = new Map([[range.from, outcome.logs.length]]);
    }
    if (this.second) {
      const disagreement = await this.againstSecond(this.second, range, first, perBlock);
      if (disagreement) return disagreement;
    }
    return outcome;
  }

  /** Each block of `[first, range.to]` that may hold a watched log, counted against its receipts. */
  private async againstReceipts(range: ReadForCheck, first: number): Promise<Checked> {
    const { rpc, watch } = this.parts;
    const numbers: number[] = [];
    for (let n = first; n <= range.to; n++) numbers.push(n);
    const absent = numbers.filter((n) => !range.headers.has(n));
    const fetched = absent.length > 0 ? await this.parts.headers(absent) : new Map<number, Header>();
    const checked: number[] = [];
    for (const n of numbers) {
      const header = range.headers.get(n) ?? fetched.get(n);
      if (!header) return { kind: "not yet", block: n, said: "it answered null for the block's header" };
      // A bloom never leaves out what its block holds: one that cannot hold a watched log needs no receipts.
      if ((range.perBlock.get(n) ?? 0) === 0 && isBloom(header.logsBloom) && !watch.mayHold(header)) continue;
      checked.push(n);
    }
    for (let i = 0; i < checked.length; i += RECEIPTS_AT_ONCE) {
      const chunk = checked.slice(i, i + RECEIPTS_AT_ONCE);
      const wholes = await Promise.all(
        chunk.map((n) => readReceipts(rpc, (range.headers.get(n) ?? fetched.get(n))!, watch)),
      );
      for (const [j, whole] of wholes.entries()) {
        const n = chunk[j]!;
        if ("incomplete" in whole) {
          return { kind: "not yet", block: n, said: `checked against its receipts, ${whole.incomplete}` };
        }
        const answered = range.perBlock.get(n) ?? 0;
        const held = whole.logs.length;
        if (held === answered) continue;
        if (held < answered) {
          return {
            kind: "not yet",
            block: n,
            said: `its receipts hold ${held} watched logs, its logs answer ${answered}`,
          };
        }
        const alone = range.from === range.to;
        this.parts.notice?.(
          `block ${n}: the logs answer held ${answered} of the ${held} watched logs its receipts hold: ${alone ? "taking them from its receipts" : "reading the block on its own"}`,
        );
        // A single block takes its receipts' logs; a longer range is read again with this block apart.
        return alone ? { kind: "replaced", logs: whole.logs } : { kind: "cut", at: n > range.from ? n : n + 1 };
      }
    }
    return STANDS;
  }

  /** The second endpoint's watched logs of `[first, range.to]`, block by block, against the first's. */
  private async againstSecond(
    second: RpcClient,
    range: ReadForCheck,
    first: number,
    perBlock: ReadonlyMap<number, number>,
  ): Promise<NotYet | undefined> {
    const where = `the second endpoint (--verify-rpc) at ${second.origin}`;
    let theirs: Map<number, { logs: number; hash: string }> | NotYet;
    try {
      theirs = await this.secondLogs(second, first, range.to, where);
    } catch (err) {
      throw secondFailed(second.origin, first, range.to, err);
    }
    if (!(theirs instanceof Map)) return theirs;
    for (let n = first; n <= range.to; n++) {
      const ours = perBlock.get(n) ?? 0;
      const their = theirs.get(n);
      if (ours !== (their?.logs ?? 0)) {
        return {
          kind: "not yet",
          block: n,
          said: `${where} answered ${their?.logs ?? 0} watched logs for it, this one ${ours}`,
        };
      }
      // The answer's hash of the block, else (its logs taken from its receipts) the header's.
      const hash = range.blocks.get(n) ?? range.headers.get(n)?.hash.toLowerCase();
      if (their && their.hash !== hash) {
        return { kind: "not yet", block: n, said: `${where} has it as ${their.hash}, this one as ${hash}` };
      }
    }
    return undefined;
  }

  /**
   * The second endpoint's watched logs of `[from, to]` counted by block (halved where it refuses the range's
   * size), or what it answered instead of blocks it does not have yet.
   */
  private async secondLogs(
    second: RpcClient,
    from: number,
    to: number,
    where: string,
  ): Promise<Map<number, { logs: number; hash: string }> | NotYet> {
    let answer: ResultSlices | null;
    try {
      answer = await second.callSlices("eth_getLogs", [logsFilter(this.parts.filter, from, to)], {
        splittable: to > from,
      });
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      if (isBeyondHead(err.rpcMessage) || isUnknownBlock(err.rpcMessage)) {
        return { kind: "not yet", block: from, said: `${where} answered "${err.rpcMessage}" for blocks ${from}-${to}` };
      }
      const tooLarge =
        err instanceof RangeTooSlow || err instanceof RpcAnswerTooLarge || rangeRefusal(err, from, to - from + 1);
      if (!tooLarge || to === from) throw err;
      const middle = Math.floor((from + to) / 2);
      const before = await this.secondLogs(second, from, middle, where);
      if (!(before instanceof Map)) return before;
      const after = await this.secondLogs(second, middle + 1, to, where);
      if (!(after instanceof Map)) return after;
      for (const [n, counted] of after) before.set(n, counted);
      return before;
    }
    if (answer === null) {
      return { kind: "not yet", block: from, said: `${where} answered null for the logs of blocks ${from}-${to}` };
    }
    const counted = new Map<number, { logs: number; hash: string }>();
    for (const slice of answer.slices(1_000)) {
      for (const log of slice as RawLog[]) {
        if (log?.removed) continue;
        if (typeof log?.blockNumber !== "string" || typeof log.blockHash !== "string") {
          return { kind: "not yet", block: from, said: `${where} answered a log without a block number or hash` };
        }
        const n = hexToNumber(log.blockNumber);
        const hash = log.blockHash.toLowerCase().slice(0, 66);
        const seen = counted.get(n);
        // Logs of one block under two hashes: the chain moved under its read.
        if (seen && seen.hash !== hash) {
          return { kind: "not yet", block: n, said: `${where} answered logs of it under two hashes` };
        }
        counted.set(n, { logs: (seen?.logs ?? 0) + 1, hash });
      }
    }
    return counted;
  }
}

/** The second endpoint could not be read: the run stops, naming it, rather than keep blocks it did not check. */
function secondFailed(origin: string, from: number, to: number, err: unknown): unknown {
  if (!(err instanceof ChainmailError) && !(err instanceof RpcError)) return err;
  const said =
    err instanceof RpcError
      ? `it refused ${err.method}: ${err.rpcMessage} (JSON-RPC code ${err.code})`
      : err.shortMessage;
  return new ChainmailError(
    err instanceof RpcError ? "UPSTREAM_REJECTED" : err.code,
    `The second JSON-RPC endpoint (--verify-rpc) at ${origin} could not be read for ${from === to ? `block ${from}` : `blocks ${from}-${to}`}: ${said.replace(/\.?$/, ".")} The index stops there rather than keep blocks near the head that it did not check.`,
    {
      hint: "Bring that endpoint back or name another with --verify-rpc; without it, blocks near the head are kept as the indexed endpoint shows them.",
      details: {
        upstream: RPC_UPSTREAM,
        verify_rpc: origin,
        block: from,
        ...(err instanceof RpcError ? { rpc_code: err.code, method: err.method } : {}),
      },
    },
  );
}
