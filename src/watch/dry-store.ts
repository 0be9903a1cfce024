/**
 * The store of a dry run (`previewWatch`): reads go to the watch's real store (when it exists), writes stay in
 * memory and are dropped at the end, so the same run as `watch()` takes, claims and "sends" without changing
 * anything. Emails already in the journal (open, to retry) are the real run's business: a dry run shows none.
 */
import type { Position } from "./records.js";
import type { Mail, MailResult, MailState, RuleState, StoredRecord, TakenRecord, WatchStore } from "./store.js";

export class DryRunStore implements WatchStore {
  readonly where: string;
  readonly #real: WatchStore | undefined;
  readonly #reorgDepth: number;
  readonly #states = new Map<string, RuleState>();
  /** Records taken in this run, per rule, oldest first. */
  readonly #taken = new Map<string, StoredRecord[]>();
  /** `rule key` of the records an intent of this run carries (records of the real store's queue included). */
  readonly #claimed = new Set<string>();
  /** Records of the real store this run's reorg check looked at, by `rule key`. */
  readonly #seen = new Map<string, StoredRecord>();
  /** Mailed records this run saw a reorg remove, per rule: what a real run would retract. */
  readonly #removedMailed = new Map<string, StoredRecord[]>();
  /** `rule key` of the records a retraction of this run carries. */
  readonly #retracted = new Set<string>();
  /** Record emails of this run, per rule (max_per_hour counts them). */
  readonly #recordMails = new Map<string, number>();
  /** How many records each email of this run carries, by CustomID. */
  readonly recordsOf = new Map<string, number>();

  constructor(real: WatchStore | undefined, where: string, reorgDepth: number) {
    this.#real = real;
    this.where = where;
    this.#reorgDepth = reorgDepth;
  }

  async lockWriter() {
    return { release: async () => {} };
  }

  async ruleState(rule: string): Promise<RuleState | undefined> {
    return this.#states.get(rule) ?? (await this.#real?.ruleState(rule));
  }

  /**
   * A rule that never ran starts, in a dry run, `reorg_depth` blocks back from where it would start: its newest
   * records then show what its template gives.
   */
  async startRule(rule: string, fingerprint: string, floor: Position): Promise<void> {
    const back = { block: Math.max(-1, (floor.block ?? 0) - this.#reorgDepth - 1), date: "" };
    this.#states.set(rule, { rule, fingerprint, floor: back, read: undefined, lastMailed: undefined, digestSince: 0 });
  }

  async knownKeys(rule: string, keys: readonly string[]): Promise<Set<string>> {
    const known = (await this.#real?.knownKeys(rule, keys)) ?? new Set<string>();
    for (const record of this.#taken.get(rule) ?? []) if (keys.includes(record.key)) known.add(record.key);
    return known;
  }

  async take(rule: string, records: readonly TakenRecord[], read: Position, digestSince?: number): Promise<void> {
    const state = (await this.ruleState(rule))!;
    this.#states.set(rule, { ...state, read, digestSince: state.digestSince ?? digestSince });
    const taken = this.#taken.get(rule) ?? [];
    for (const r of records) taken.push({ ...r, state: "queued", customId: undefined, reorged: false });
    this.#taken.set(rule, taken);
  }

  async recordsFrom(rule: string, from: number, through?: number): Promise<StoredRecord[]> {
    const found = (await this.#real?.recordsFrom(rule, from, through)) ?? [];
    for (const r of found) this.#seen.set(`${rule} ${r.key}`, r);
    return found;
  }

  /** A mailed record this run sees removed is one a real run would retract (retract: true). */
  async markReorged(rule: string, keys: readonly string[], removed: boolean): Promise<void> {
    if (!removed) return;
    for (const key of keys) {
      const record = this.#seen.get(`${rule} ${key}`);
      if (record?.state !== "sent" || record.retracted) continue;
      this.#removedMailed.set(rule, [...(this.#removedMailed.get(rule) ?? []), { ...record, reorged: true }]);
    }
  }

  async queued(rule: string, limit: number): Promise<StoredRecord[]> {
    const stored = (await this.#real?.queued(rule, limit + this.#claimed.size)) ?? [];
    const waiting = [...stored, ...(this.#taken.get(rule) ?? [])];
    return waiting.filter((r) => !this.#claimed.has(`${rule} ${r.key}`)).slice(0, limit);
  }

  /** Held records of this run are claimed by the preview: it shows them in no email of this hour. */
  async hold(rule: string, keys: readonly string[]): Promise<void> {
    for (const key of keys) this.#claimed.add(`${rule} ${key}`);
  }

  async held(rule: string, beforeHour: number, limit: number): Promise<StoredRecord[]> {
    const stored = (await this.#real?.held(rule, beforeHour, limit + this.#claimed.size)) ?? [];
    return stored.filter((r) => !this.#claimed.has(`${rule} ${r.key}`)).slice(0, limit);
  }

  async mailsSince(rule: string, since: number): Promise<number> {
    return ((await this.#real?.mailsSince(rule, since)) ?? 0) + (this.#recordMails.get(rule) ?? 0);
  }

  async retractable(rule: string, limit: number): Promise<StoredRecord[]> {
    const stored = (await this.#real?.retractable(rule, limit + this.#retracted.size)) ?? [];
    return [...stored, ...(this.#removedMailed.get(rule) ?? [])]
      .filter((r) => !this.#retracted.has(`${rule} ${r.key}`))
      .slice(0, limit);
  }

  async journal(rule: string, intents: readonly { mail: Mail; keys: readonly string[] }[]): Promise<void> {
    for (const { mail, keys } of intents) {
      const marked = mail.kind === "retraction" ? this.#retracted : this.#claimed;
      for (const key of keys) marked.add(`${rule} ${key}`);
      this.recordsOf.set(mail.customId, keys.length);
      if ((mail.kind ?? "record") === "record") this.#recordMails.set(rule, (this.#recordMails.get(rule) ?? 0) + 1);
    }
  }

  async mails(_states: readonly MailState[]): Promise<Mail[]> {
    return [];
  }

  async markSending(): Promise<void> {}

  async settle(_results: readonly MailResult[]): Promise<void> {}

  async resend(): Promise<Map<string, MailState | undefined>> {
    return new Map();
  }

  async close(): Promise<void> {
    await this.#real?.close();
  }
}
