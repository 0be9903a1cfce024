/**
 * The email-send node's ports as TypeBox schemas. Messages and the request keep unknown fields: the Mailjet
 * Send API v3.1 knows more fields than are listed here (Globals, ReplyTo, Priority, …) and they are forwarded.
 */
import { type Static, Type } from "@sinclair/typebox";
import { ExactInteger, NO_CONTROL_PATTERN, OpenObject } from "./common.js";

const open = { additionalProperties: true } as const;

export const EmailAddress = OpenObject(
  {
    Email: Type.String({ minLength: 1, description: "An email address" }),
    Name: Type.Optional(Type.String()),
  },
  { title: "Address" },
);

const Base64 = Type.String({ minLength: 1, description: "Base64-encoded content" });

export const Attachment = OpenObject(
  { ContentType: Type.String({ minLength: 1 }), Filename: Type.String({ minLength: 1 }), Base64Content: Base64 },
  { title: "Attachment" },
);

export const InlinedAttachment = OpenObject(
  {
    ContentType: Type.String({ minLength: 1 }),
    Filename: Type.String({ minLength: 1 }),
    ContentID: Type.Optional(Type.String({ description: "Referenced from HTML as cid:<ContentID>" })),
    Base64Content: Base64,
  },
  { title: "Inlined attachment" },
);

export const EmailMessage = OpenObject(
  {
    From: EmailAddress,
    To: Type.Array(EmailAddress, { minItems: 1 }),
    Cc: Type.Optional(Type.Array(EmailAddress)),
    Bcc: Type.Optional(Type.Array(EmailAddress)),
    Subject: Type.Optional(Type.String({ maxLength: 255, "x-rule": "a string of at most 255 characters" })),
    TextPart: Type.Optional(Type.String()),
    HTMLPart: Type.Optional(Type.String()),
    Attachments: Type.Optional(Type.Array(Attachment)),
    InlinedAttachments: Type.Optional(Type.Array(InlinedAttachment)),
    // Any JSON value, not only strings: Mailjet's templating also takes numbers, arrays and objects.
    Variables: Type.Optional(Type.Record(Type.String(), Type.Any())),
    TemplateLanguage: Type.Optional(Type.Literal(true, { description: "Only the literal true is allowed" })),
    TemplateID: Type.Optional(Type.Integer({ minimum: 1 })),
    Headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    CustomID: Type.Optional(Type.String()),
    EventPayload: Type.Optional(Type.String()),
    CustomCampaign: Type.Optional(Type.String()),
    DeduplicateCampaign: Type.Optional(Type.Boolean()),
    URLTags: Type.Optional(Type.String({ maxLength: 256, "x-rule": "a string of at most 256 characters" })),
  },
  { $id: "EmailMessage", title: "Message" },
);
export type EmailMessage = Static<typeof EmailMessage>;

export const EmailRequest = OpenObject(
  {
    Messages: Type.Array(EmailMessage, { minItems: 1, description: "Any number: larger batches are split" }),
    SandboxMode: Type.Optional(Type.Literal(true, { description: "Validate without delivering" })),
    SendToSuppressed: Type.Optional(
      Type.Literal(true, {
        description:
          "Send to recipients on the suppression list too (chainmail's own field, never passed to the provider). Without it a suppressed recipient gets an error entry `suppressed` and the others get the message",
      }),
    ),
  },
  { title: "Request: a batch of messages" },
);
export type EmailRequest = Static<typeof EmailRequest>;

const MAX_CREDENTIAL_LENGTH = 4096;
const credential = {
  minLength: 1,
  maxLength: MAX_CREDENTIAL_LENGTH,
  pattern: NO_CONTROL_PATTERN,
  "x-secret": true,
  "x-rule": `a non-empty string of at most ${MAX_CREDENTIAL_LENGTH} characters, without line breaks or control characters`,
} as const;

/** What a caller without Mailjet credentials can do instead (the message of a missing one says it). */
const MISSING_LOGIN =
  "give the Mailjet API key here (and its secret key as params.password), or set MAILJET_API_KEY and MAILJET_SECRET_KEY, or send another way with EMAIL_TRANSPORT=smtp|outbox (`chainmail --help` lists them)";

export const EmailParams = Type.Object(
  {
    // Both go into a login (HTTP Basic, SMTP AUTH) and are secrets: never echoed, scrubbed from every answer.
    "user id": Type.String({
      ...credential,
      description: "Mailjet API key (or SMTP user)",
      "x-missing": MISSING_LOGIN,
    }),
    password: Type.String({
      ...credential,
      description: "Mailjet secret key (or SMTP password)",
      "x-missing":
        "give the Mailjet secret key here, or set MAILJET_SECRET_KEY with MAILJET_API_KEY, or EMAIL_TRANSPORT=smtp|outbox",
    }),
  },
  // Holds credentials: no value given here is ever echoed in an error, wherever in it the mistake is.
  { additionalProperties: false, title: "Params: mail provider credentials", "x-secret": true },
);
export type EmailParams = Static<typeof EmailParams>;

export const RecipientResult = Type.Object(
  {
    Email: Type.String(),
    MessageUUID: Type.String({ description: "Empty in SandboxMode" }),
    MessageID: ExactInteger({ description: "Beyond 2^53 in real data: kept exact. 0 in SandboxMode" }),
    MessageHref: Type.String(),
  },
  { ...open, title: "Recipient result" },
);

export const ErrorEntry = Type.Object(
  {
    ErrorIdentifier: Type.String(),
    ErrorCode: Type.String(),
    StatusCode: Type.Number(),
    ErrorMessage: Type.String(),
    ErrorRelatedTo: Type.Array(Type.String()),
  },
  { ...open, title: "Error entry" },
);
export type ErrorEntry = Static<typeof ErrorEntry>;

export const MessageResult = Type.Object(
  {
    Status: Type.Union([Type.Literal("success"), Type.Literal("error")]),
    To: Type.Optional(Type.Array(RecipientResult)),
    Cc: Type.Optional(Type.Array(RecipientResult)),
    Bcc: Type.Optional(Type.Array(RecipientResult)),
    Errors: Type.Optional(Type.Array(ErrorEntry)),
  },
  { ...open, title: "Message result" },
);
export type MessageResult = Static<typeof MessageResult>;

/** Port `messages sent`: one result per input message, in input order. */
export const MessagesSent = Type.Object(
  { Messages: Type.Array(MessageResult) },
  { ...open, $id: "MessagesSent", title: "Messages sent" },
);
export type MessagesSent = Static<typeof MessagesSent>;
