/**
 * How fast the JSON-RPC client calls a metered endpoint: every request waits its turn in a token bucket priced by
 * the provider's costs (providers.ts; counted as requests where it does not price calls), so the index spends the
 * budget at the pace the provider allows instead of running into its throttling and pausing.
 *
 * - The rate starts at 0.9× the plan: the one the user states (INDEX_RPC_CU_PER_SECOND /
 *   INDEX_RPC_REQUESTS_PER_SECOND: a fixed cap, never exceeded), else the provider's smallest plan, doubled every
 *   half second while the bucket holds calls back and nothing is throttled (the user's plan may be larger: slow
 *   start); with neither, calls are not paced until the first throttling, which sets the rate to a share of what
 *   went through in the second before it.
 * - Throttling (HTTP 429, a batch item's 429, -32005 "limit exceeded") lowers the rate multiplicatively, at most
 *   once per half second; half seconds held back without throttling raise it additively. Never below a floor.
 *   Every call refused for over a second and a half is an outage, not a budget: once served again, the rate
 *   doubles back to where it was.
 * - A batch whose throttled items lie here and there, some served after them, was not cut off by a budget (which
 *   refuses the items from where it ran out): those 429s are independent, asked again at once, the rate kept.
 * - A request refused whole, or from some item on (as a budget running out refuses), is judged by the requests sent
 *   after its answer: the next two refused whole too, it was the budget; one served, the 429s were independent.
 * - 429s that keep coming at the same share however slow it goes are not the budget's: they are taken as
 *   independent failures (the rate goes back to where it was, and they are asked again at once) until the share
 *   of throttled calls rises clearly above theirs.
 * - A batch is cut into pieces that cost at most about a second of the plan: a larger one never fits a provider's
 *   one-second window and would be throttled for ever.
 * - Calls asked for ahead of need (`spare`: headers read ahead while logs are decoded) go only when no other call
 *   waits, in pieces no larger than the bucket (rpc.ts): they spend the budget the process leaves unused while it is
 *   busy, never leave a debt a needed call would pay, and never count as demand that raises the rate.
 * - A stated plan is kept over every one-second window, not only on average: a provider counts its budget per
 *   window, and a large call sent into a full bucket's debt could otherwise put more than the plan into one.
 * It also counts what was spent: calls by method, units, throttled calls, for the usage report.
 */
import { costOf, type Provider } from "./providers.js";

export interface PacerOptions {
  provider: Provider;
  /** The user's plan, when stated: a cap in the provider's units or in requests per second. */
  unitsPerSecond?: number | undefined;
  requestsPerSecond?: number | undefined;
  /** Waits `ms` (the client's HTTP engine's timer, aborted with the client). */
  wait: (ms: number) => Promise<void>;
  now?: () => number;
}

/** What the client spent, for `chainmail index`'s report. */
export interface RpcUsage {
  /** Calls sent, by method (batch items one by one; calls asked again counted again). */
  calls: Record<string, number>;
  /** Units billed by the provider's table ("CU"); absent where it does not price calls. */
  units?: number | undefined;
  unit: string;
  /** Share of the calls answered with throttling. */
  throttledShare: number;
  /** The pace the client settled on, in `unit` per second; absent while unpaced. */
  rate?: number | undefined;
  /** True when the rate is the user's stated cap. */
  stated: boolean;
  /** True when the 429s were judged independent of the pace. */
  randomThrottling: boolean;
}

/** Share of the plan the pacing starts at: the rest is room for other clients and the window's edges. */
const START_SHARE = 0.9;
/** Rate adjustments happen at most this often. */
const STEP_MS = 500;
/** Multiplicative decrease on throttling. */
const DECREASE = 0.7;
/** Additive increase per step, as a share of the rate at the last decrease. */
const INCREASE = 0.05;
/** Longest single wait of the queue before the rate is looked at again. */
const PUMP_STEP_MS = 100;
/** The bucket holds this long at the current rate (bursts stay short). */
const BURST_MS = 200;
/** A request refused whole or in its tail is judged independent when one sent after it is served within this long. */
const JUDGE_MS = 300;
/**
 * Requests sent after a whole refusal that must be refused whole too before it counts as the budget's: a budget
 * that ran out refuses every request until its window ends, while two more of 30 % random refusals in a row come
 * once in eleven.
 */
const REFUSALS_TO_JUDGE = 2;
/** Share of a stated plan any one-second window may carry (the rest: the time calls take to reach the provider). */
const WINDOW_SHARE = 0.95;
/** Answers an epoch needs before its throttled share is compared (or the rate lowered again soon). */
const MIN_ANSWERS = 8;
/** Without that many answers, the rate is lowered again after this long. */
const EPOCH_MS = 3_000;
/** No call served for this long is an outage, not a budget. */
const OUTAGE_MS = 1_500;
/** Epochs remembered. */
const HISTORY = 8;
/** Outcomes remembered for the recent throttled share. */
const RECENT = 64;

/** A request waiting for the bucket. */
interface Waiter {
  cost: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Calls answered between two decreases: how many, how many throttled, and the rate they went at (summed). */
interface Epoch {
  start: number;
  end: number;
  rateSum: number;
  answers: number;
  items: number;
  throttled: number;
  /** Units of the calls served. */
  served: number;
}

const newEpoch = (start: number): Epoch => ({
  start,
  end: start,
  rateSum: 0,
  answers: 0,
  items: 0,
  throttled: 0,
  served: 0,
});
/** Units served per second over an epoch. */
const throughput = (epoch: Epoch) => (epoch.served * 1000) / Math.max(1, epoch.end - epoch.start);
const rateOf = (epoch: Epoch) => epoch.rateSum / epoch.items;

export class Pacer {
  readonly unit: string;
  /** Units per second the bucket refills at; undefined: not paced (yet). */
  private rate: number | undefined;
  private readonly cap: number | undefined;
  private readonly floor: number;
  /** Cost above which a batch is cut into pieces. */
  readonly maxPieceCost: number | undefined;
  private readonly priced: boolean;
  private tokens: number;
  private last: number;
  private slowStart: boolean;
  private readonly slowStartAllowed: boolean;
  /** Set when the rate fell for the budget's 429s after independent ones were recognised. */
  private budgetSeen = false;
  /**
   * After throttling of every call (an outage, or a burst the rate had no part in): the rate to double back to
   * once calls are served again.
   */
  private recoverTo: number | undefined;
  /** When the rate last changed, whether anything was held back since, and the rate at the last decrease. */
  private stepAt: number;
  private heldBack = false;
  private decreasedFrom: number | undefined;
  private lastDecrease = Number.NEGATIVE_INFINITY;
  /** Throttled shares of the last rate epochs, for telling the budget's 429s from independent ones. */
  private history: Epoch[] = [];
  private epoch: Epoch;
  /** Set once 429s are judged independent: their share. */
  private randomShare: number | undefined;
  /** A batch came back with items throttled here and there (independent 429s). */
  private scatteredSeen = false;
  private recent: boolean[] = [];
  /** Units sent in the last second (for the first rate of an unpaced client). */
  private sent: { at: number; cost: number }[] = [];
  private readonly now: () => number;
  /** Requests waiting for the bucket, in order; those asked ahead of need apart, served after them. */
  private readonly queue: Waiter[] = [];
  private readonly spareQueue: Waiter[] = [];
  /** When a request refused whole or in its tail was answered, while what follows has not yet told why. */
  private refusedAt: number | undefined;
  private refusedWhole = false;
  /** Requests refused whole in a row since the one held for judgement. */
  private refusedInRow = 0;
  /** Under a stated plan: what was let go in the last second, oldest first. */
  private readonly released: { at: number; cost: number }[] = [];
  private pumping = false;
  /** When a call was last served, and the pace then (undefined: not paced yet). */
  private lastServed: number;
  private rateWhenServed: number | undefined;
  private readonly counts = { calls: {} as Record<string, number>, units: 0, items: 0, throttled: 0 };

  constructor(private readonly options: PacerOptions) {
    this.now = options.now ?? Date.now;
    const { provider } = options;
    this.priced = provider.costs !== undefined && options.requestsPerSecond === undefined;
    this.unit = this.priced ? provider.unit! : "requests";
    const stated = this.priced ? options.unitsPerSecond : options.requestsPerSecond;
    const plan = stated ?? (this.priced ? provider.unitsPerSecond : provider.requestsPerSecond);
    this.cap = stated;
    this.rate = plan === undefined ? undefined : plan * START_SHARE;
    this.slowStart = stated === undefined && plan !== undefined;
    this.slowStartAllowed = stated === undefined;
    // About one call a second at the least.
    this.floor = Math.max(this.priced ? provider.costs!.other : 1, plan === undefined ? 0 : plan * 0.02);
    this.maxPieceCost = plan === undefined ? undefined : Math.max(this.floor, plan * START_SHARE);
    this.tokens = this.capacity();
    this.last = this.now();
    this.stepAt = this.last;
    this.lastServed = this.last;
    this.rateWhenServed = this.rate;
    this.epoch = newEpoch(this.last);
  }

  /** What `calls` cost in the pacer's unit. */
  cost(calls: readonly { method: string }[]): number {
    return this.priced ? costOf(this.options.provider, calls)! : calls.length;
  }

  /**
   * Waits until `calls` may be sent at the paced rate, and counts them as sent; `spare`: asked ahead of need, they
   * wait until no other request does.
   */
  async take(calls: readonly { method: string }[], spare = false): Promise<void> {
    const cost = this.cost(calls);
    for (const call of calls) this.counts.calls[call.method] = (this.counts.calls[call.method] ?? 0) + 1;
    this.counts.units += cost;
    this.counts.items += calls.length;
    const now = this.now();
    this.adjust(now);
    this.note(now, cost);
    if (this.rate === undefined) return;
    await new Promise<void>((resolve, reject) => {
      (spare ? this.spareQueue : this.queue).push({ cost, resolve, reject });
      void this.pump();
    });
  }

  /**
   * Lets waiting requests go in order as the bucket fills. The wait is re-planned in short steps, so a rate that
   * rose meanwhile (throttling over) is used at once. A request costing more than the bucket holds goes once it is
   * full, and leaves it in debt.
   */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0 || this.spareQueue.length > 0) {
        const now = this.now();
        this.adjust(now);
        if (this.rate === undefined) break;
        this.refill(now);
        const needed = this.queue.length > 0;
        const line = needed ? this.queue : this.spareQueue;
        const head = line[0]!;
        // A call costing more than the bucket holds goes once it is full (read ahead, it is cut to fit: rpc.ts).
        const need = Math.min(head.cost, this.capacity());
        const windowWait = this.windowWait(now, head.cost);
        if (this.tokens >= need && windowWait === 0) {
          this.tokens -= head.cost;
          if (this.cap !== undefined) this.released.push({ at: now, cost: head.cost });
          line.shift();
          head.resolve();
          continue;
        }
        // Only calls needed now are demand the rate should rise for.
        if (needed) this.heldBack = true;
        const bucketWait = ((need - this.tokens) / this.rate) * 1000;
        // At least a millisecond: the clock's grain (a shorter wait could find the bucket unchanged for ever).
        await this.options.wait(Math.max(1, Math.min(PUMP_STEP_MS, Math.max(bucketWait, windowWait))));
      }
      for (const waiter of [...this.queue.splice(0), ...this.spareQueue.splice(0)]) waiter.resolve();
    } catch (err) {
      // Aborted: every waiting request fails with it.
      for (const waiter of [...this.queue.splice(0), ...this.spareQueue.splice(0)]) waiter.reject(err);
    } finally {
      this.pumping = false;
    }
  }

  /**
   * An answer to `items` calls, `throttled` of them throttled, to a request sent at `sentAt`. Lowers the rate when
   * the throttling is the budget's; judges it independent when its share stays the same at a lower rate, or at once
   * when `scattered`. A budget refuses a batch's items from where it ran out (a tail); items refused here and there,
   * with some served after them, are independent of the pace: asked again at once, the rate left as it is.
   * A request refused whole or from some item on is judged by the ones sent after its answer: a budget that ran out
   * refuses them whole too, so one served within `JUDGE_MS` says the 429s were independent; `REFUSALS_TO_JUDGE`
   * refused whole in a row say they were the budget's, and so does no request in that time after a whole refusal
   * (after a tail, nothing is concluded).
   */
  answered(items: number, throttled: number, cost = items, scattered = false, sentAt?: number): void {
    this.counts.throttled += throttled;
    this.epoch.served += items === 0 ? 0 : (cost * (items - throttled)) / items;
    this.epoch.end = this.now();
    this.epoch.answers++;
    this.epoch.items += items;
    this.epoch.throttled += throttled;
    this.epoch.rateSum += (this.rate ?? 0) * items;
    for (let i = 0; i < items; i++) this.recent.push(i < throttled);
    if (this.recent.length > RECENT) this.recent.splice(0, this.recent.length - RECENT);
    const now = this.now();
    if (throttled < items) {
      this.lastServed = now;
      this.rateWhenServed = this.rate;
    }
    // Refused whole, or from some item on (a tail): what a budget running out looks like, unless what follows says not.
    const cutOff = throttled > 0 && !scattered;
    // Once 429s are known to be independent, their share decides (budgetThrottled), not the next answer.
    if (sentAt !== undefined && this.randomShare === undefined) {
      const verdict = this.judgeRefusal(now, sentAt, cutOff, throttled === items);
      if (verdict === "budget") this.budgetThrottled(now);
      if (verdict !== "none" || cutOff) return;
    }
    if (throttled === 0) return;
    if (scattered) {
      this.scatteredSeen = true;
      return;
    }
    this.budgetThrottled(now);
  }

  /**
   * What the request answered now says of a refusal held for judgement (`refusedAt`, whole or a tail): "budget",
   * "independent", "none" (nothing to judge, or not yet). A refusal with none held is held from now.
   */
  private judgeRefusal(
    now: number,
    sentAt: number,
    cutOff: boolean,
    whole: boolean,
  ): "budget" | "independent" | "none" {
    const held = this.refusedAt;
    if (held !== undefined && now - held > JUDGE_MS) {
      // No request sent after it was answered in time. Refused whole, it counts as the budget's; refused in its
      // tail only, it says too little to slow down for.
      const wasWhole = this.refusedWhole;
      this.hold(cutOff ? now : undefined, whole);
      if (wasWhole) return "budget";
    }
    const still = this.refusedAt;
    if (still === undefined || sentAt < still) {
      if (cutOff && still === undefined) this.hold(now, whole);
      return "none";
    }
    // Sent after the refusal: refused whole too (REFUSALS_TO_JUDGE times), the budget ran out; served (even in
    // part), the refusal was independent of the pace (unless refusals already make up most calls: then something
    // does hold it back).
    if (whole && this.refusedInRow + 1 < REFUSALS_TO_JUDGE) {
      this.hold(now, true, this.refusedInRow + 1);
      return "none";
    }
    this.hold(undefined, false);
    if (whole || (this.recent.length >= RECENT / 2 && this.recentShare() > 0.5)) return "budget";
    // Its own tail, if any, waits for the next request in turn.
    if (cutOff) this.hold(now, false);
    return "independent";
  }

  private hold(at: number | undefined, whole: boolean, inRow = 0): void {
    this.refusedAt = at;
    this.refusedWhole = at !== undefined && whole;
    this.refusedInRow = inRow;
  }

  /** Throttling taken as the budget's: the rate lowered, at most once per step, unless judged independent. */
  private budgetThrottled(now: number): void {
    if (this.randomShare !== undefined) {
      // Independent 429s: asked again at once, unless the share rose clearly above theirs (the budget's too).
      if (this.recent.length < RECENT / 2 || this.recentShare() <= this.randomShare * 1.3 + 0.1) return;
    }
    // One decrease per step, and only once the rate now has been tried on enough calls (or for a while).
    const since = now - this.lastDecrease;
    if (since < STEP_MS || (this.epoch.answers < MIN_ANSWERS && since < EPOCH_MS)) return;
    if (this.randomShare === undefined && this.judgedRandom()) return;
    this.decrease(now);
  }

  /** Calls held back while the provider asked to wait (`Retry-After`): the bucket starts empty after it. */
  pausedFor(): void {
    this.tokens = Math.min(this.tokens, 0);
  }

  usage(): RpcUsage {
    const { calls, units, items, throttled } = this.counts;
    return {
      calls: { ...calls },
      ...(this.priced ? { units } : {}),
      unit: this.unit,
      throttledShare: items === 0 ? 0 : throttled / items,
      ...(this.rate === undefined ? {} : { rate: Math.round(this.rate) }),
      stated: this.cap !== undefined,
      randomThrottling: this.randomShare !== undefined || this.scatteredSeen,
    };
  }

  /** The pacer's clock (ms), to stamp when a request is sent. */
  clock(): number {
    return this.now();
  }

  /** The rate now, in `unit` per second (undefined while unpaced). */
  get currentRate(): number | undefined {
    return this.rate;
  }

  /** Largest piece a batch read ahead may be cut into: what the bucket holds (at least one call). */
  get sparePieceCost(): number | undefined {
    return this.rate === undefined ? undefined : this.capacity();
  }

  /**
   * Under a stated plan: how long until `cost` more fits the last second's window (0: now). Any one-second window
   * the provider counts in then carries at most the plan, however the bucket's bursts and debts fall.
   */
  private windowWait(now: number, cost: number): number {
    if (this.cap === undefined) return 0;
    while (this.released.length > 0 && this.released[0]!.at <= now - 1000) this.released.shift();
    const limit = this.cap * WINDOW_SHARE;
    let sum = cost;
    for (const r of this.released) sum += r.cost;
    // A call larger than the window's share goes alone into an empty window.
    if (sum <= limit || this.released.length === 0) return 0;
    // The oldest entries leave the window one by one, until what stays and `cost` fit.
    for (const r of this.released) {
      sum -= r.cost;
      if (sum <= limit) return r.at + 1000 - now;
    }
    return this.released.at(-1)!.at + 1000 - now;
  }

  private capacity(): number {
    return this.rate === undefined ? 0 : (this.rate * BURST_MS) / 1000;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.capacity(), this.tokens + ((now - this.last) * this.rate!) / 1000);
    this.last = now;
  }

  /** Slow start and additive increase, once per step held back by the bucket without throttling. */
  private adjust(now: number): void {
    if (this.rate === undefined || now - this.stepAt < STEP_MS) return;
    const held = this.heldBack;
    this.stepAt = now;
    this.heldBack = false;
    if (!held || now - this.lastDecrease < STEP_MS) return;
    this.refill(now);
    const recovering = this.recoverTo !== undefined && this.rate < this.recoverTo;
    if (!recovering) this.recoverTo = undefined;
    const raised = recovering
      ? Math.min(this.recoverTo!, this.rate * 2)
      : this.slowStart
        ? this.rate * 2
        : this.rate + INCREASE * (this.decreasedFrom ?? this.rate);
    this.setRate(this.cap === undefined ? raised : Math.min(raised, this.cap));
  }

  private decrease(now: number): void {
    // Nothing served for over a second: no budget refuses every call of a whole window.
    const everyCall = now - this.lastServed > OUTAGE_MS;
    // Every call refused says nothing of the rate: once served again, back to it (unpaced before: doubling on).
    if (!everyCall) this.recoverTo = undefined;
    // The pace before the outage, not the one it fell to while every call was refused.
    else this.recoverTo ??= this.rateWhenServed ?? Number.POSITIVE_INFINITY;
    this.slowStart = false;
    this.lastDecrease = now;
    if (this.rate === undefined) {
      // Unpaced until now: a share of what went through in the last second.
      const sent = this.sentLastSecond();
      this.rate = Math.max(this.floor, sent * DECREASE);
      this.tokens = 0;
      this.last = now;
      this.decreasedFrom = sent;
    } else {
      this.refill(now);
      this.decreasedFrom = this.rate;
      this.setRate(Math.max(this.floor, this.rate * DECREASE));
      this.tokens = Math.min(this.tokens, 0);
    }
    if (this.randomShare !== undefined) this.budgetSeen = true;
    this.nextEpoch();
  }

  private nextEpoch(): void {
    // An epoch of a second or more: what a one-second window let through is averaged over it.
    const epoch = this.epoch;
    if (epoch.answers >= MIN_ANSWERS && epoch.end - epoch.start >= 1000) {
      this.history = [...this.history.slice(-(HISTORY - 1)), epoch];
    }
    this.epoch = newEpoch(this.now());
  }

  /**
   * Whether the rate now and one at least 1.4× as high show the 429s independent of the rate: under a budget, what
   * gets through stays the same however fast calls are sent (the share throttled falls as the rate does);
   * independent 429s keep their share, so what gets through falls with the rate. Judged so, the rate goes back to
   * the higher one.
   */
  private judgedRandom(): boolean {
    const now = this.epoch;
    const s2 = now.throttled / now.items;
    // A clear share of 429s (a few at the budget's edge say nothing), not every call (an outage).
    const clear = (share: number) => share >= 0.1 && share < 0.95;
    if (now.answers < MIN_ANSWERS || now.end - now.start < 1000 || !clear(s2)) return false;
    const r2 = rateOf(now);
    const before = this.history.findLast((e) => rateOf(e) >= 1.4 * r2 && clear(e.throttled / e.items));
    if (!before) return false;
    const r1 = rateOf(before);
    // Under a budget what got through per second is the same at both rates (1); independent 429s make it r2 / r1
    // (0.71 at most): judged by which it is nearer.
    if (throughput(now) / throughput(before) >= (1 + r2 / r1) / 2) return false;
    this.randomShare = s2;
    this.setRate(Math.max(this.rate ?? 0, r1));
    this.nextEpoch();
    // Nothing says the budget was reached: slow start goes on where it may.
    this.slowStart = this.slowStartAllowed && !this.budgetSeen;
    return true;
  }

  private recentShare(): number {
    return this.recent.filter(Boolean).length / this.recent.length;
  }

  private setRate(rate: number): void {
    this.rate = rate;
  }

  private sentLastSecond(): number {
    return this.sent.reduce((sum, s) => sum + s.cost, 0);
  }

  private note(now: number, cost: number): void {
    if (this.rate !== undefined) return;
    this.sent.push({ at: now, cost });
    while (this.sent.length > 0 && this.sent[0]!.at < now - 1000) this.sent.shift();
  }
}
