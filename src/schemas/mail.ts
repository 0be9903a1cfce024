/**
 * The mail lifecycle's shapes as TypeBox schemas: Mailjet's event callback (what `POST /events/mailjet` reads), a
 * message's state and events (what `GET /messages/<id>`, `chainmail mail status` and the library answer) and a
 * suppression. The OpenAPI document is generated from them.
 */
import { type Static, Type } from "@sinclair/typebox";
import { ExactInteger, OpenObject, Uint64 } from "./common.js";

/** Events one POST may carry: Mailjet groups about a second's worth; far more is not Mailjet. */
export const MAX_EVENTS_PER_POST = 10_000;
/** Longest string field kept; a longer one is refused (nothing of Mailjet's comes near). */
export const MAX_FIELD_LENGTH = 4_096;
/** Longest `Payload` (the message's EventPayload) kept. */
export const MAX_PAYLOAD_LENGTH = 16_384;

const text = (description: string, maxLength = MAX_FIELD_LENGTH) =>
  Type.String({ maxLength, description, "x-rule": `a string of at most ${maxLength} characters` });

export const MailjetEventKinds = ["sent", "open", "click", "bounce", "blocked", "spam", "unsub"] as const;

/** One Mailjet event callback (fields beyond these are allowed and not kept). */
export const MailjetEvent = OpenObject(
  {
    event: text("The kind: sent, open, click, bounce, blocked, spam, unsub (others are acknowledged and ignored)", 64),
    time: Type.Integer({ minimum: 0, maximum: 2 ** 40, description: "Unix time, seconds" }),
    MessageID: Uint64("Mailjet's 64-bit message id (beyond 2^53 in real data: kept exact)"),
    email: text("The recipient", 254),
    Message_GUID: Type.Optional(text("The MessageUUID", 128)),
    CustomID: Type.Optional(text("The CustomID given at send time", 255)),
    Payload: Type.Optional(text("The EventPayload given at send time", MAX_PAYLOAD_LENGTH)),
    mj_campaign_id: Type.Optional(Uint64("The campaign's id")),
    mj_contact_id: Type.Optional(Uint64("The contact's id")),
    customcampaign: Type.Optional(text("The campaign")),
    hard_bounce: Type.Optional(Type.Boolean()),
    blocked: Type.Optional(Type.Boolean()),
    error_related_to: Type.Optional(text("What the error is about")),
    error: Type.Optional(text("The error")),
    source: Type.Optional(text("Where a spam complaint came from")),
    url: Type.Optional(text("The link clicked")),
  },
  { $id: "MailjetEvent", title: "Mailjet event callback" },
);
export type MailjetEvent = Static<typeof MailjetEvent>;

export const MailjetEventBody = Type.Union(
  [MailjetEvent, Type.Array(MailjetEvent, { maxItems: MAX_EVENTS_PER_POST })],
  {
    description: "One event (Mailjet's version 1) or an array of them (version 2, grouped)",
  },
);

export const MAIL_STATE_NAMES = [
  "queued",
  "sent",
  "delivered",
  "opened",
  "clicked",
  "bounced",
  "blocked",
  "unsubscribed",
  "spam",
] as const;

export const MessageStatus = Type.Object(
  {
    MessageID: ExactInteger({ description: "Per recipient, like Mailjet's (beyond 2^53: kept exact)" }),
    MessageUUID: Type.Union([Type.String(), Type.Null()]),
    CustomID: Type.Union([Type.String(), Type.Null()]),
    Email: Type.String({ description: "The recipient" }),
    From: Type.Union([Type.String(), Type.Null()], {
      description: "The sender; null when only events know the message",
    }),
    Transport: Type.Union([Type.String(), Type.Null()], { description: "mailjet, smtp or outbox; null likewise" }),
    State: Type.Union(
      MAIL_STATE_NAMES.map((s) => Type.Literal(s)),
      { description: "The highest-ranked state its send and events reached (docs/email.md)" },
    ),
    Bounce: Type.Optional(Type.Union([Type.Literal("hard"), Type.Literal("soft")])),
    EventPayload: Type.Union([Type.String(), Type.Null()], { description: "Given at send time" }),
    Events: Type.Array(
      Type.Object(
        {
          event: Type.String({ description: "Mailjet's kind: sent, open, click, bounce, blocked, spam, unsub" }),
          time: Type.String({ description: "When (UTC)" }),
          Payload: Type.Optional(Type.String({ description: "The message's EventPayload" })),
        },
        { additionalProperties: true },
      ),
      { description: "Oldest first; at most 100 kept" },
    ),
    EventsTruncated: Type.Boolean(),
  },
  { $id: "MessageStatus", title: "A message's state" },
);
export type MessageStatus = Static<typeof MessageStatus>;

export const Suppression = Type.Object(
  {
    sender: Type.String({ description: "The sender address (lower case), or * for every sender" }),
    email: Type.String({ description: "The recipient (lower case)" }),
    reason: Type.Union(
      ["manual", "soft_bounce", "hard_bounce", "blocked", "unsubscribed", "spam"].map((r) => Type.Literal(r)),
    ),
    since: Type.String({ description: "When (UTC)" }),
    message_id: Type.Union([Type.String(), Type.Null()], { description: "The message whose event caused it" }),
    event: Type.Union([Type.String(), Type.Null()], { description: "The key of that event" }),
  },
  { $id: "Suppression", title: "A suppressed recipient" },
);

/** One stored event as `GET /events` hands it out (the workflow packages' delivery-event triggers emit these). */
export const FeedEvent = Type.Object(
  {
    cursor: Type.String({ description: "Pass it back as `after` to go on after this event" }),
    event: Type.String({ description: "Mailjet's kind: sent, open, click, bounce, blocked, spam, unsub" }),
    time: Type.String({ description: "When it happened (UTC), as Mailjet said" }),
    MessageID: ExactInteger({ description: "Per recipient, like Mailjet's (beyond 2^53: kept exact)" }),
    MessageUUID: Type.Union([Type.String(), Type.Null()]),
    CustomID: Type.Union([Type.String(), Type.Null()]),
    email: Type.String({ description: "The recipient (lower case)" }),
    From: Type.Union([Type.String(), Type.Null()], { description: "The sender, once a send record named it" }),
    State: Type.Union(
      MAIL_STATE_NAMES.map((s) => Type.Literal(s)),
      { description: "The message's state now, after all its events so far" },
    ),
    Payload: Type.Optional(Type.String({ description: "The message's EventPayload" })),
  },
  {
    $id: "FeedEvent",
    title: "A delivery event",
    additionalProperties: true,
    description:
      "Also the kind's own fields as Mailjet gave them: hard_bounce, blocked, error_related_to, error, source, url",
  },
);
export type FeedEvent = Static<typeof FeedEvent>;

export const EventFeedPage = Type.Object(
  {
    events: Type.Array(FeedEvent, { description: "Oldest first, in the order they were stored" }),
    cursor: Type.String({
      description: "The last event's cursor (the `after` given when there is none): ask with it next",
    }),
    more: Type.Boolean({ description: "More events follow: ask again at once" }),
  },
  { $id: "EventFeedPage", title: "A page of the event feed" },
);
export type EventFeedPage = Static<typeof EventFeedPage>;
