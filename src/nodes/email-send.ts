import { setting } from "../core/env.js";
import { toErrorPayload, type Violation } from "../core/errors.js";
import { defineNode, type RunContext } from "../core/node.js";
import { holdSuppressed, mergeHeld, sendRecords } from "../mail/send-guard.js";
import type { MailStore, SendRecord } from "../mail/store.js";
import { withUnsubscribeHeaders } from "../mail/unsubscribe.js";
import { ErrorPayloadSchema, RawResponse } from "../schemas/common.js";
import { EmailParams, EmailRequest, MessagesSent } from "../schemas/email.js";
import { operatorParams, resolveMailTransport, transportViolations } from "../transports/index.js";
import { isObject, messageProblems } from "../transports/message-rules.js";

/**
 * Sends a batch of messages through the configured transport (Mailjet Send API v3.1 by default) and reports one
 * result per message, in input order. Any number of messages: the transport splits.
 */
export const emailSend = defineNode({
  id: "email-send",
  version: "v3.1",
  title: "Email sender",
  description:
    "Sends a batch of email messages (Mailjet Send API v3.1 format, any size) and returns per-message delivery results.",
  inputs: { params: EmailParams, request: EmailRequest },
  outputs: { "messages sent": MessagesSent, response: RawResponse, error: ErrorPayloadSchema },
  successPort: "messages sent",
  filledByOperator: ["params"],
  prepare: withOperatorCredentials,
  check: ({ params, request }, ctx) => [...checkRequest(request), ...transportViolations(ctx.config, params, request)],
  run: async ({ params, request }, ctx) => {
    const transport = await resolveMailTransport(ctx.config);
    const store = await mailStore(ctx.config.env);
    // No store of its own (a workflow host): the list of the chainmail service the host named, if any.
    const held = await holdSuppressed(store ?? ctx.suppressions, request);
    // Mailjet writes its own List-Unsubscribe in place of any given: its `unsub` event does that job there.
    const outgoing = transport.name === "mailjet" ? held.request : withUnsubscribeHeaders(held.request, ctx.config.env);
    const sent = held.kept.length ? await transport.send(outgoing, params, ctx) : undefined;
    const outcome = mergeHeld(held, sent);
    if (store && sent) await record(store, sendRecords(held, outcome, transport.name), ctx);
    return Object.fromEntries(Object.entries(outcome).filter(([, v]) => v !== undefined));
  },
});

/**
 * The mail store CHAINMAIL_MAIL_DB names, if any. Loaded only then: the workflow packages keep no store and carry
 * no database driver (n8n refuses a package that reaches the file system).
 */
async function mailStore(env: RunContext["config"]["env"]): Promise<MailStore | undefined> {
  if (setting(env, "CHAINMAIL_MAIL_DB") === undefined) return undefined;
  const { mailStoreOf } = await import("../mail/open.js");
  return mailStoreOf(env);
}

/**
 * What went out is recorded for the lifecycle. A store that fails now must not turn a sent batch into an error
 * (the caller would send it again): the failure is logged, and Mailjet's events still fill the store in later.
 */
async function record(store: MailStore, records: SendRecord[], ctx: RunContext): Promise<void> {
  if (records.length === 0) return;
  try {
    await store.recordSends(records);
  } catch (err) {
    ctx.logger?.warn({ err: toErrorPayload(err), store: store.where }, "could not record the messages sent");
  }
}

/**
 * Uses the operator's login when the caller gave no credentials at all (the transport's definition says it:
 * MAILJET_API_KEY / MAILJET_SECRET_KEY; smtp and outbox need none from the caller, smtp logs in with SMTP_URL's).
 */
function withOperatorCredentials(input: Record<string, unknown>, ctx: RunContext): Record<string, unknown> {
  const given = input.params;
  const empty = given === undefined || (isObject(given) && Object.keys(given).length === 0);
  if (!empty) return input;
  const operator = operatorParams(ctx.config);
  return operator ? { ...input, params: { ...operator } } : input;
}

/**
 * What the upstream would reject for certain, per message, named like `request.Messages[3].To[0].Email`: the
 * message rules every transport shares (transports/message-rules.ts).
 */
function checkRequest(request: unknown): Violation[] {
  if (!isObject(request) || !Array.isArray(request.Messages)) return [];
  const globals = isObject(request.Globals) ? request.Globals : {};
  const violations: Violation[] = [];
  const messages = request.Messages;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message)) continue;
    const problems = messageProblems(message, globals);
    if (problems.length === 0) continue;
    const at = `request.Messages[${i}]`;
    for (const problem of problems) {
      const field = problem.path ? `${at}.${problem.path}` : at;
      const violation: Violation = { field, rule: problem.rule, message: problem.say(field) };
      if (problem.value !== undefined) violation.value = problem.value;
      violations.push(violation);
    }
  }
  return violations;
}
