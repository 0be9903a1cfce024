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
      const auth = target && login(target, params);
      const secrets = secretsOf(auth);
      const results: MessageResult[] = [];
      const replies: string[] = [];
      let session: SmtpSession | undefined;
      const response = (): RawResponse | undefined => {
        const lines = replies.length ? replies : session?.lastReply ? [session.lastReply] : [];
        if (!lines.length) return undefined;
        const body = lines.map((line) => scrub(line, secrets)).join("\n");
        return { status: replyCode(lines.at(-1)), headers: {}, body };
      };

      let lost: { error: SmtpError; at: number } | undefined;
      let cancelled = false;
      try {
        // Rendered one at a time: only the message being sent is held in memory.
        for await (const r of renderEach(request)) {
          if ("errors" in r) {
            results.push({ Status: "error", Errors: r.errors });
            continue;
          }
          const message = r.message;
          if (sandbox) {
            results.push(successEntry(message, { href: () => "", sandbox: true }));
            continue;
          }
          if (lost) {
            results.push(notSentResult("the SMTP session failed before this message"));
            continue;
          }
          if (ctx.signal?.aborted) {
            cancelled = true;
            results.push(notSentResult("the send was cancelled"));
            continue;
          }
          if (!session) {
            // The session opens for the first message there is to send (none when every message failed its checks).
            session = new SmtpSession(target!, timeoutOf(config));
            try {
              await session.open(auth);
            } catch (err) {
              ctx.logger?.warn({ transport: "smtp", code: (err as SmtpError).code }, "SMTP session failed to start");
              lost = { error: err as SmtpError, at: message.index };
              results.push(notSentResult("the SMTP session could not be opened"));
              continue;
            }
          }
          // The journal notes messages a caller can ask about later: those with a CustomID.
          const noted = journal && message.customId ? { journal, id: message.customId } : undefined;
          try {
            await noted?.journal.note(noted.id, { step: "attempt" });
          } catch (err) {
            ctx.logger?.error({ transport: "smtp", reason: (err as Error).message }, "SMTP journal write failed");
            results.push(notSentResult("the SMTP journal could not be written"));
            continue;
          }
          const settle = (result: MessageResult) => {
            results.push(result);
            try {
              noted?.journal.noteNow(noted.id, { step: "result", result });
            } catch (err) {
              // The server answered; only the note is missing, so a later lookup says "delivery unknown".
              ctx.logger?.error({ transport: "smtp", reason: (err as Error).message }, "SMTP journal write failed");
            }
          };
          try {
            const sent = await session.send(
              message.envelope,
              message.raw,
              noted && (() => noted.journal.noteNow(noted.id, { step: "data" })),
            );
            replies.push(sent.reply);
            const accepted = new Set(sent.accepted.map((e) => e.toLowerCase()));
            const entry = successEntry(message, { href: midHref(message), accepted });
            // Delivered to the accepted recipients: the entry lists them and names the refused ones.
            settle(
              sent.rejected.length
                ? { ...entry, Status: "error", Errors: sent.rejected.map((e) => recipientEntry(message, e, secrets)) }
                : entry,
            );
          } catch (err) {
            const failure = err as SendFailure;
            const smtp = failure.smtp;
            // A 4xx/5xx reply is the server's answer: the message was refused, not lost (even a 421 that closes).
            const refused = (smtp.responseCode ?? 0) >= 400 && (smtp.responseCode ?? 0) < 600;
            if (refused) {
              replies.push(smtp.response ?? "");
              settle({ Status: "error", Errors: refusedEntry(message, smtp, secrets) });
              await session.reset().catch(() => undefined);
              // A server may close the session with its refusal (421, or a drop): the rest cannot go out.
              if (session.closed) lost = { error: smtp, at: message.index };
              continue;
            }
            lost = { error: smtp, at: message.index };
            results.push(
              failure.dataStarted
                ? deliveryUnknownResult(
                    `the SMTP session failed while this message was being transferred (${scrub(smtp.message, secrets)})`,
                  )
                : notSentResult("the SMTP session failed before this message"),
            );
          }
        }
      } finally {
        session?.close();
      }

      const messages = messageStatuses(results);
      if (lost) {
        const cause = sessionError(lost.error, target!, secrets);
        const unknown = messages.unknown.length
          ? ` Message ${messages.unknown.join(", ")} may have been delivered.`
          : "";
        const error = batchError(cause, messages, {
          error: `Sent ${messages.sent.length} of ${results.length} messages, then the SMTP session failed at message ${lost.at}: ${cause.shortMessage}${unknown}`,
          hint: "The messages listed in details.messages.not_sent were not sent and can be sent again.",
        });
        return failedOutcome(results, error, response());
      }
      if (cancelled) return failedOutcome(results, cancelledError(messages, results.length), response());
      const raw = response();
      return { "messages sent": { Messages: results }, ...(raw ? { response: raw } : {}) };
    },
  };
}
