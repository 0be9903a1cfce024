/**
 * What reading a block range came to, as facts in one tagged type (`kind`): the fetcher's `eth_getLogs` answer
 * (fetcher.ts), the checks' verdicts (completeness.ts, verify.ts) and the range reader's outcome (range-reader.ts)
 * all say what they saw here. None of them decides a range's size: the planner (range-planner.ts) learns from
 * these facts and plans the next ranges; the indexer (indexer.ts) commits, waits or rolls back.
 */

import type { Header, RangeRefusal, ResultSlices, RpcError } from "../chain/index.js";
import type { ActivityRow, PriceAnswer } from "../sources/own-index/index.js";
import type { Unpriced } from "./pricing.js";

/** One range read (possibly ahead of the commit cursor), ready to commit. */
export interface ReadRange {
  from: number;
  to: number;
  /** The headers read for it (near the head, the tail checks, blocks whose logs carried no timestamp). */
  headers: Map<number, Header>;
  /** The hash of each block its logs came from, lower case. */
  blocks: ReadonlyMap<number, string>;
  records: ActivityRow[];
  answers: PriceAnswer[];
  unpriced: Unpriced[];
  /** Logs of known exchanges that gave no record (counted when the range is committed). */
  unknownLogs: number;
}

/** Logs an `eth_getLogs` answer held over how many blocks: the density the next ranges are sized by. */
export interface Seen {
  blocks: number;
  logs: number;
}

/** The range's logs answer was cut off: read again as the blocks before `at` and those from `at` on. */
export interface Cut {
  kind: "cut";
  at: number;
  /** Where the answer was cut off silently at a count of logs: that count (a cap the provider has shown). */
  capAt?: number | undefined;
  seen?: Seen | undefined;
}

/** A block whose logs the node does not show complete yet, and what it answered: read again after a pause. */
export interface NotYet {
  kind: "not yet";
  block: number;
  said: string;
  seen?: Seen | undefined;
}

/** The provider refused `eth_getLogs` over `blocks` blocks: for its size, its time or its answer's length. */
export interface Refused {
  kind: "refused";
  blocks: number;
  error: RpcError;
  /** What its words say: a cap, or a range that should work from this range's start (`suggested`). */
  refusal: RangeRefusal;
}

export type RangeFact =
  /** `eth_getLogs` answered: the answer, parsed a slice at a time (result-slices.ts). */
  | { kind: "logs"; slices: ResultSlices }
  /** The range read whole and checked: its records to commit. */
  | { kind: "read"; range: ReadRange; seen?: Seen | undefined }
  | Refused
  /** A range planned as sparse whose last block looks dense (its header's bloom is full). */
  | { kind: "dense end" }
  | Cut
  | NotYet
  /** The chain moved under the read: logs of another block than the header names for their number. */
  | { kind: "moved"; seen?: Seen | undefined };

/** What `eth_getLogs` over a range came to (fetcher.ts). */
export type LogsFact = Extract<RangeFact, { kind: "logs" | "refused" | "not yet" }>;

/** What reading a range came to (range-reader.ts): the facts the planner and the indexer act on. */
export type ReadFact = Exclude<RangeFact, { kind: "logs" }>;
