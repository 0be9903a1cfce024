/**
 * Where a watch keeps what must survive a crash, beside the index: per rule its start and read position, every
 * record it took (the key that makes "never twice" a primary key), and the journal of emails — each intent
 * written before its send and settled with the send's result.
 *
 * Record states: queued (taken, waiting for its email) → claimed (an email intent carries it) → sent | failed |
 * unknown; dropped when a reorg removed it before it was mailed. A queued record may be held for its clock hour's
 * digest (max_per_hour). A sent record a reorg removed gets one retraction email (retract). Email states: pending
 * (journalled; a send may have happened) → sent | failed | unknown, or retry (surely not sent: send again).
 */
import type { EmailMessage, MessageResult } from "../schemas/email.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import type { Position } from "./records.js";

export type RecordState = "queued" | "claimed" | "sent" | "failed" | "unknown" | "dropped";
export type MailState = "pending" | "retry" | "sent" | "failed" | "unknown";
/**
 * record: the email of a record, a transaction or a digest (what max_per_hour counts); retraction: a reorg removed
 * what an email reported; overflow: the records a clock hour's cap held back.
 */
export type MailKind = "record" | "retraction" | "overflow";

export interface RuleState {
  rule: string;
  /** What the rule reads (source, retriever, contract, token): a rule that changes it needs a new id. */
  fingerprint: string;
  /** Records at or before this are never mailed (where the rule started: follow.ts `findFloor`). */
  floor: Position;
  /** The newest record taken so far; reads start a reorg depth below it. */
  read: Position | undefined;
  /** Key of the newest record whose email went out. */
  lastMailed: string | undefined;
  /** When the current digest started collecting (ms since the epoch). */
  digestSince: number | undefined;
}

export interface TakenRecord {
  key: string;
  position: Position;
  record: TransactionRecord;
}

export interface StoredRecord extends TakenRecord {
  state: RecordState;
  customId: string | undefined;
  reorged: boolean;
  /** retract: a retraction carries it already. */
  retracted?: boolean | undefined;
  /** max_per_hour: the clock hour (hours since the epoch) whose digest the record waits for. */
  heldHour?: number | undefined;
}

export interface Mail {
  customId: string;
  rule: string;
  state: MailState;
  message: EmailMessage;
  attempts: number;
  result?: MessageResult | undefined;
  /** Default record. */
  kind?: MailKind | undefined;
}

export interface MailResult {
  customId: string;
  state: Exclude<MailState, "pending">;
  result: MessageResult;
}

export interface WatchStore {
  /** Where it is (a path or a database URL without its password), for messages. */
  readonly where: string;
  /**
   * Resolves once this is the only watch writing the store (two would settle each other's sends); another one
   * waits, and takes over when this one stops or dies.
   */
  lockWriter(options: { signal?: AbortSignal | undefined; onWait?: () => void }): Promise<{ release(): Promise<void> }>;
  ruleState(rule: string): Promise<RuleState | undefined>;
  startRule(rule: string, fingerprint: string, floor: Position): Promise<void>;
  /** Records the rule already took, of these keys. */
  knownKeys(rule: string, keys: readonly string[]): Promise<Set<string>>;
  /** One transaction: the new records as queued, the read position, and the digest start if it is new. */
  take(rule: string, records: readonly TakenRecord[], read: Position, digestSince?: number): Promise<void>;
  /** Records taken in blocks `from` to `through` (to the end when undefined), for the reorg check. */
  recordsFrom(rule: string, from: number, through?: number): Promise<StoredRecord[]>;
  /** Marks records a reorg removed (queued ones become dropped), or clears the mark of records that came back. */
  markReorged(rule: string, keys: readonly string[], removed: boolean): Promise<void>;
  /** The rule's oldest queued records not held for an hour's digest, at most `limit`. */
  queued(rule: string, limit: number): Promise<StoredRecord[]>;
  /** max_per_hour: these queued records wait for the digest of clock hour `hour` (hours since the epoch). */
  hold(rule: string, keys: readonly string[], hour: number): Promise<void>;
  /** The rule's oldest queued records held for a clock hour before `hour`, at most `limit`. */
  held(rule: string, beforeHour: number, limit: number): Promise<StoredRecord[]>;
  /** How many record emails (not retractions, not hour digests) the rule journalled at or after `since` (ms). */
  mailsSince(rule: string, since: number): Promise<number>;
  /** retract: the rule's sent records a reorg removed that no retraction carries yet, oldest first, at most `limit`. */
  retractable(rule: string, limit: number): Promise<StoredRecord[]>;
  /**
   * One transaction: the intents as pending emails, their records claimed (a retraction's records marked as
   * retracted by it instead), and the rule's digest window closed when a record email is among them. `at`: when
   * (ms; default now), the time max_per_hour counts the emails by.
   */
  journal(rule: string, intents: readonly { mail: Mail; keys: readonly string[] }[], at?: number): Promise<void>;
  /** Emails in these states, oldest first (at most `limit`). */
  mails(states: readonly MailState[], limit?: number): Promise<Mail[]>;
  /** Back to pending before a send is retried (a crash during it must be resolved, not resent). */
  markSending(customIds: readonly string[]): Promise<void>;
  /** One transaction: each email's state and result, its records' state, and each rule's last mailed record. */
  settle(results: readonly MailResult[]): Promise<void>;
  /**
   * Someone decided: these emails, delivery unknown or failed, are to be sent again (state retry, their records
   * claimed again); others are left as they are. Resolves to the state each id had (none: no such email).
   */
  resend(customIds: readonly string[]): Promise<Map<string, MailState | undefined>>;
  close(): Promise<void>;
}
