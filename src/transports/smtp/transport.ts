/**
 * EMAIL_TRANSPORT=smtp: each message becomes a MIME message (see ../mime) sent over one SMTP session, one by
 * one in input order. Failures follow Mailjet's rules: a message the server refuses gets an error entry and the
 * others go on; a session that cannot start is an `error`; a session lost midway keeps the results of what was
 * sent, marks the rest "not sent" (or "delivery unknown" for the one whose DATA had started) and adds a
 * `partial_failure` error. No message is ever sent twice: nothing is retried once its DATA may have started.
 */
import type { Config } from "../../core/config.js";
import { setting } from "../../core/env.js";
import { ChainmailError, type ErrorCodeName, MessageErrorCode } from "../../core/errors.js";
import { scrub } from "../../core/http.js";
import type { RunContext } from "../../core/node.js";
import type { RawResponse } from "../../schemas/common.js";
import type { EmailParams, EmailRequest, MessageResult } from "../../schemas/email.js";
import { type RenderedMessage, renderEach } from "../mime/render.js";
import { successEntry } from "../mime/results.js";
import {
  batchError,
  cancelledError,
  deliveryUnknownResult,
  errorEntry,
  failedOutcome,
  messageStatuses,
  notSentResult,
} from "../outcome.js";
import { isNoLogin, type MailTransport, type SendOutcome } from "../types.js";
import { parseSmtpUrl, type SendFailure, type SmtpError, SmtpSession, type SmtpTarget } from "./connection.js";
import { SmtpJournal } from "./journal.js";

/** `MessageHref` of an SMTP-sent copy: RFC 2392 `mid:` URL of its Message-ID. */
const midHref = (message: RenderedMessage) => () => `mid:${encodeURIComponent(message.messageId.slice(1, -1))}`;

/** `user id`/`password`, when given, override the login in SMTP_URL. */
function login(target: SmtpTarget, params: Partial<EmailParams>): { user: string; pass: string } | undefined {
  const given = isNoLogin(params) ? {} : params;
  const user = given["user id"] || target.user;
  const pass = given.password || target.pass;
  return user && pass ? { user, pass } : undefined;
}

function secretsOf(auth: { user: string; pass: string } | undefined): string[] {
  if (!auth) return [];
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return [auth.pass, encodeURIComponent(auth.pass), b64(auth.pass), b64(`\0${auth.user}\0${auth.pass}`)];
}

function timeoutOf(config: Config): number {
  return setting(config.env, "SMTP_TIMEOUT_MS") ?? setting(config.env, "CHAINMAIL_TIMEOUT_MS");
}

const replyCode = (reply: string | undefined) => Number(/^\d{3}/.exec(reply ?? "")?.[0] ?? 0);

/** A session-level failure as the `error` port's payload. */
function sessionError(err: SmtpError, target: SmtpTarget, secrets: string[]): ChainmailError {
  const reply = err.response ? scrub(err.response, secrets) : undefined;
  const where = `${target.host}:${target.port}`;
  const tls =
    err.code === "ETLS" || /certificate|SSL|TLS|wrong version/i.test(`${err.originalCode ?? ""} ${err.message}`);
  const details = {
    transport: "smtp",
    server: where,
    smtp: { code: err.code, command: err.command, ...(reply ? { reply, replyCode: replyCode(reply) } : {}) },
    ...(tls ? { tls: true } : {}),
  };
  const why = scrub(err.message, secrets);
  const fail = (kind: ErrorCodeName, message: string, hint: string) =>
    new ChainmailError(kind, message, { hint, details });
  if (err.code === "EAUTH" || err.code === "ENOAUTH")
    return fail(
      "UPSTREAM_AUTH",
      `The SMTP server ${where} refused the login: ${why}.`,
      "Check the user and password in SMTP_URL or the `user id`/`password` params. Nothing was sent.",
    );
  if (tls)
    return fail(
      "UPSTREAM_UNREACHABLE",
      `TLS with the SMTP server ${where} failed: ${why}.`,
      "Check the scheme (smtps:// for port 465, smtp:// with STARTTLS for 587) and the server's certificate. Nothing was sent.",
    );
  if (err.code === "ETIMEDOUT")
    return fail(
      "UPSTREAM_TIMEOUT",
      `The SMTP server ${where} did not answer in time: ${why}.`,
      "Raise SMTP_TIMEOUT_MS or check the server. Nothing was sent.",
    );
  if (err.code === "EPROTOCOL")
    return fail("UPSTREAM_BAD_RESPONSE", `The SMTP server ${where} does not speak SMTP as expected: ${why}.`, "");
  return fail(
    "UPSTREAM_UNREACHABLE",
    `Could not talk to the SMTP server ${where}: ${why}.`,
    "Check SMTP_URL's host and port and that the server is running. Nothing was sent.",
  );
}

/** Where each recipient sits in the message, for ErrorRelatedTo (`To[1].Email`). */
function recipientPath(message: RenderedMessage, email: string): string {
  for (const field of ["To", "Cc", "Bcc"] as const) {
    const i = message.recipients[field].findIndex((e) => e.toLowerCase() === email.toLowerCase());
    if (i >= 0) return `${field}[${i}].Email`;
  }
  return "To";
}

/** The error entry of a message the server refused (sender, every recipient, or the content). */
function refusedEntry(message: RenderedMessage, err: SmtpError, secrets: string[]) {
  const reply = scrub(err.response ?? err.message, secrets);
  // Nothing went out: a temporary refusal (4xx) may be sent again as is.
  const status = replyCode(reply) >= 400 && replyCode(reply) < 500 ? 503 : 400;
  if (err.command === "MAIL FROM")
    return [
      errorEntry(
        MessageErrorCode.SMTP_SENDER_REJECTED,
        `The SMTP server refused the sender ${message.from}: ${reply}. The message was not sent.`,
        ["From"],
        { SMTPReply: reply },
        status,
      ),
    ];
  if (err.code === "EENVELOPE" && err.rejectedErrors?.length)
    return err.rejectedErrors.map((r) => recipientEntry(message, r, secrets, status));
  return [
    errorEntry(
      MessageErrorCode.SMTP_MESSAGE_REJECTED,
      `The SMTP server refused the message: ${reply}. It was not delivered to anyone.`,
      [],
      { SMTPReply: reply },
      status,
    ),
  ];
}

function recipientEntry(message: RenderedMessage, err: SmtpError, secrets: string[], statusCode = 400) {
  const reply = scrub(err.response ?? err.message, secrets);
  const email = err.recipient ?? "";
  return errorEntry(
    MessageErrorCode.SMTP_RECIPIENT_REJECTED,
    `The SMTP server refused the recipient ${email}: ${reply}.`,
    [recipientPath(message, email)],
    { SMTPReply: reply },
    statusCode,
  );
}

export function smtpTransport(config: Config): MailTransport {
  const journal = config.smtpJournal ? new SmtpJournal(config.smtpJournal) : undefined;
  return {
    name: "smtp",
    async lookup(customIds) {
      if (journal) return journal.lookup(customIds);
      const why = "without SMTP_JOURNAL the smtp transport keeps no record of what it sent";
      return new Map(customIds.map((id) => [id, deliveryUnknownResult(why)]));
    },
    async send(request: EmailRequest, params: EmailParams, ctx): Promise<SendOutcome> {
      const sandbox = request.SandboxMode === true;
      if (!sandbox && !config.smtpUrl) {
        throw new ChainmailError("INVALID_INPUT", "EMAIL_TRANSPORT=smtp needs SMTP_URL.", {
          hint: "Set SMTP_URL, e.g. smtps://user:password@smtp.example.com:465.",
          details: { setting: "SMTP_URL" },
        });
      }
      const target = sandbox ? undefined : parseSmtpUrl(config.smtpUrl!);
      const batch = new SmtpBatch(target, target && login(target, params), timeoutOf(config), journal, ctx);
      try {
        // Rendered one at a time: only the message being sent is held in memory.
        for await (const r of renderEach(request)) {
          if ("errors" in r) batch.results.push({ Status: "error", Errors: r.errors });
          else await batch.send(r.message);
        }
      } finally {
        batch.close();
      }
      return batch.outcome();
    },
  };
}

/**
 * One batch over one SMTP session: the results so far, the server's replies, and whether the session was lost
 * (then nothing more is sent) or the send cancelled. `target` is undefined in sandbox mode (nothing is sent).
 */
class SmtpBatch {
  readonly results: MessageResult[] = [];
  private readonly replies: string[] = [];
  private readonly secrets: string[];
  private session: SmtpSession | undefined;
  private lost: { error: SmtpError; at: number } | undefined;
  private cancelled = false;

  constructor(
    private readonly target: SmtpTarget | undefined,
    private readonly auth: { user: string; pass: string } | undefined,
    private readonly timeoutMs: number,
    private readonly journal: SmtpJournal | undefined,
    private readonly ctx: RunContext,
  ) {
    this.secrets = secretsOf(auth);
  }

  async send(message: RenderedMessage): Promise<void> {
    if (!this.target) return void this.results.push(successEntry(message, { href: () => "", sandbox: true }));
    if (this.lost) return void this.results.push(notSentResult("the SMTP session failed before this message"));
    if (this.ctx.signal?.aborted) {
      this.cancelled = true;
      return void this.results.push(notSentResult("the send was cancelled"));
    }
    const session = this.session ?? (await this.open(this.target, message));
    if (!session) return;
    // The journal notes messages a caller can ask about later: those with a CustomID.
    const noted = this.journal && message.customId ? { journal: this.journal, id: message.customId } : undefined;
    try {
      await noted?.journal.note(noted.id, { step: "attempt" });
    } catch (err) {
      this.ctx.logger?.error({ transport: "smtp", reason: (err as Error).message }, "SMTP journal write failed");
      return void this.results.push(notSentResult("the SMTP journal could not be written"));
    }
    const settle = (result: MessageResult) => {
      this.results.push(result);
      try {
        noted?.journal.noteNow(noted.id, { step: "result", result });
      } catch (err) {
        // The server answered; only the note is missing, so a later lookup says "delivery unknown".
        this.ctx.logger?.error({ transport: "smtp", reason: (err as Error).message }, "SMTP journal write failed");
      }
    };
    try {
      const sent = await session.send(
        message.envelope,
        message.raw,
        noted && (() => noted.journal.noteNow(noted.id, { step: "data" })),
      );
      this.replies.push(sent.reply);
      settle(this.accepted(message, sent.accepted, sent.rejected));
    } catch (err) {
      await this.failed(message, session, err as SendFailure, settle);
    }
  }

  /** The session opens for the first message there is to send (none when every message failed its checks). */
  private async open(target: SmtpTarget, message: RenderedMessage): Promise<SmtpSession | undefined> {
    const session = new SmtpSession(target, this.timeoutMs);
    this.session = session;
    try {
      await session.open(this.auth);
      return session;
    } catch (err) {
      this.ctx.logger?.warn({ transport: "smtp", code: (err as SmtpError).code }, "SMTP session failed to start");
      this.lost = { error: err as SmtpError, at: message.index };
      this.results.push(notSentResult("the SMTP session could not be opened"));
      return undefined;
    }
  }

  /** Delivered to the accepted recipients: the entry lists them and names the refused ones. */
  private accepted(message: RenderedMessage, accepted: string[], rejected: SmtpError[]): MessageResult {
    const entry = successEntry(message, {
      href: midHref(message),
      accepted: new Set(accepted.map((e) => e.toLowerCase())),
    });
    if (!rejected.length) return entry;
    return { ...entry, Status: "error", Errors: rejected.map((e) => recipientEntry(message, e, this.secrets)) };
  }

  private async failed(
    message: RenderedMessage,
    session: SmtpSession,
    failure: SendFailure,
    settle: (result: MessageResult) => void,
  ): Promise<void> {
    const smtp = failure.smtp;
    // A 4xx/5xx reply is the server's answer: the message was refused, not lost (even a 421 that closes).
    const refused = (smtp.responseCode ?? 0) >= 400 && (smtp.responseCode ?? 0) < 600;
    if (refused) {
      this.replies.push(smtp.response ?? "");
      settle({ Status: "error", Errors: refusedEntry(message, smtp, this.secrets) });
      await session.reset().catch(() => undefined);
      // A server may close the session with its refusal (421, or a drop): the rest cannot go out.
      if (session.closed) this.lost = { error: smtp, at: message.index };
      return;
    }
    this.lost = { error: smtp, at: message.index };
    this.results.push(
      failure.dataStarted
        ? deliveryUnknownResult(
            `the SMTP session failed while this message was being transferred (${scrub(smtp.message, this.secrets)})`,
          )
        : notSentResult("the SMTP session failed before this message"),
    );
  }

  close(): void {
    this.session?.close();
  }

  outcome(): SendOutcome {
    const { results, lost } = this;
    const messages = messageStatuses(results);
    if (lost) {
      const cause = sessionError(lost.error, this.target!, this.secrets);
      const unknown = messages.unknown.length ? ` Message ${messages.unknown.join(", ")} may have been delivered.` : "";
      const error = batchError(cause, messages, {
        error: `Sent ${messages.sent.length} of ${results.length} messages, then the SMTP session failed at message ${lost.at}: ${cause.shortMessage}${unknown}`,
        hint: "The messages listed in details.messages.not_sent were not sent and can be sent again.",
      });
      return failedOutcome(results, error, this.response());
    }
    if (this.cancelled) return failedOutcome(results, cancelledError(messages, results.length), this.response());
    const raw = this.response();
    return { "messages sent": { Messages: results }, ...(raw ? { response: raw } : {}) };
  }

  private response(): RawResponse | undefined {
    const lines = this.replies.length ? this.replies : this.session?.lastReply ? [this.session.lastReply] : [];
    if (!lines.length) return undefined;
    const body = lines.map((line) => scrub(line, this.secrets)).join("\n");
    return { status: replyCode(lines.at(-1)), headers: {}, body };
  }
}
