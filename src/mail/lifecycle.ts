/**
 * A sent message's lifecycle as a pure function of what is known about it. Events arrive in any order (Mailjet
 * posts an `open` before its `sent` now and then, and retries), so the state is not a walk through a graph but the
 * most significant fact seen: every state has a rank and a message is in the highest-ranked state of its facts.
 * `max` is commutative, associative and idempotent, so the final state never depends on order or repetition.
 *
 * queued (handed to the outbox) < sent (a transport accepted it) < delivered (Mailjet `sent`: the receiving server
 * took it) < opened < clicked < bounced soft < bounced hard < blocked < unsubscribed < spam.
 */
import { MAIL_STATE_NAMES } from "../schemas/mail.js";

export const MAIL_STATES = MAIL_STATE_NAMES;
export type MailState = (typeof MAIL_STATES)[number];

/** What moved a message: a send-time record (`queued`, `sent`) or a delivery event. */
export type Fact =
  | "queued"
  | "sent"
  | "delivered"
  | "opened"
  | "clicked"
  | "soft_bounce"
  | "hard_bounce"
  | "blocked"
  | "unsubscribed"
  | "spam";

export const FACT_RANK: Readonly<Record<Fact, number>> = {
  queued: 0,
  sent: 1,
  delivered: 2,
  opened: 3,
  clicked: 4,
  soft_bounce: 5,
  hard_bounce: 6,
  blocked: 7,
  unsubscribed: 8,
  spam: 9,
};

export interface Lifecycle {
  state: MailState;
  /** Only for `bounced`: whether the receiving server refused for good. */
  bounce?: "hard" | "soft";
  /** The rank of the fact behind `state` (what a store compares to keep the highest). */
  rank: number;
}

/** The state a single fact puts a message in. */
export function lifecycleOf(fact: Fact): Lifecycle {
  const rank = FACT_RANK[fact];
  if (fact === "soft_bounce") return { state: "bounced", bounce: "soft", rank };
  if (fact === "hard_bounce") return { state: "bounced", bounce: "hard", rank };
  return { state: fact, rank };
}

/** The transition: a message in `current` learns `fact`. Order-free: the higher rank wins. */
export function transition(current: Lifecycle | undefined, fact: Fact): Lifecycle {
  const next = lifecycleOf(fact);
  return current && current.rank >= next.rank ? current : next;
}

/** The state of a message after all of `facts`, whatever their order. */
export const foldFacts = (facts: Iterable<Fact>): Lifecycle | undefined => {
  let state: Lifecycle | undefined;
  for (const fact of facts) state = transition(state, fact);
  return state;
};

/** `sender` of a suppression that holds for every sender. */
export const ANY_SENDER = "*";

/** Why a recipient is suppressed, strongest last: a stronger reason replaces a weaker one. */
export const SUPPRESSION_REASONS = ["manual", "soft_bounce", "hard_bounce", "blocked", "unsubscribed", "spam"] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];
export const reasonRank = (reason: SuppressionReason): number => SUPPRESSION_REASONS.indexOf(reason);

/** The suppression a fact causes at once (soft bounces suppress only after a count: see the store). */
export function suppressionOf(fact: Fact): SuppressionReason | undefined {
  switch (fact) {
    case "hard_bounce":
    case "blocked":
    case "unsubscribed":
    case "spam":
      return fact;
    default:
      return undefined;
  }
}
