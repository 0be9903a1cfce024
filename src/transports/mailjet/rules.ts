/**
 * Input rules of the Mailjet transport only: the Send API takes at most 50 recipients per message (a message
 * cannot be split across calls), and the API key is the HTTP Basic user name, which cannot hold a ":".
 */
import type { Violation } from "../../core/errors.js";
import { isObject } from "../message-rules.js";
import { MAX_RECIPIENTS_PER_CALL, recipientCount } from "./chunks.js";

export function mailjetViolations(params: unknown, request: unknown): Violation[] {
  const out: Violation[] = [];
  const user = isObject(params) ? params["user id"] : undefined;
  if (typeof user === "string" && user.includes(":")) {
    out.push({
      field: 'params["user id"]',
      rule: "no colon (HTTP Basic user)",
      message: 'params["user id"] is invalid: must not contain ":" (it is the HTTP Basic user name)',
    });
  }
  if (!isObject(request) || !Array.isArray(request.Messages)) return out;
  const messages = request.Messages;
  for (let i = 0; i < messages.length; i++) {
    const recipients = recipientCount(messages[i], request.Globals);
    if (recipients <= MAX_RECIPIENTS_PER_CALL) continue;
    const at = `request.Messages[${i}]`;
    out.push({
      field: at,
      value: recipients,
      rule: `at most ${MAX_RECIPIENTS_PER_CALL} recipients (To + Cc + Bcc)`,
      message: `${at} has ${recipients} recipients: Mailjet takes at most ${MAX_RECIPIENTS_PER_CALL} per message (To + Cc + Bcc); split it into several messages`,
    });
  }
  return out;
}
