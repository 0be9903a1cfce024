/**
 * Mailjet's message history, asked by CustomID: `GET {MAILJET_BASE_URL}/v3/REST/message?CustomID=…` answers
 * `{"Count", "Total", "Data": [{ "ID", "UUID", "ContactAlt", "Status", … }]}`, one entry per recipient copy. Found:
 * the message went out. Not found proves nothing (the history may lag behind the send), so it is "delivery
 * unknown", never "not sent".
 */
import { ChainmailError } from "../../core/errors.js";
import { httpRequest, retryReads } from "../../core/http.js";
import { parseJson } from "../../core/json.js";
import type { RunContext } from "../../core/node.js";
import type { EmailParams, MessageResult } from "../../schemas/email.js";
import { deliveryUnknownResult } from "../outcome.js";
import { UPSTREAM } from "./client.js";

interface HistoryEntry {
  ID?: number | bigint;
  UUID?: string;
  ContactAlt?: string;
}

export async function lookupByCustomId(
  customIds: readonly string[],
  params: EmailParams,
  ctx: RunContext,
): Promise<Map<string, MessageResult>> {
  const { baseUrl } = ctx.config.mailjet;
  const token = Buffer.from(`${params["user id"]}:${params.password}`).toString("base64");
  const out = new Map<string, MessageResult>();
  for (const id of customIds) {
    const data = await historyOf(id, token, params, ctx);
    const found: MessageResult & { CustomID: string } = {
      Status: "success",
      CustomID: id,
      To: data.map((entry) => ({
        Email: entry.ContactAlt ?? "",
        MessageUUID: entry.UUID ?? "",
        MessageID: entry.ID ?? 0,
        MessageHref: `${baseUrl}/v3/REST/message/${entry.ID ?? 0}`,
      })),
      Cc: [],
      Bcc: [],
    };
    const why = "Mailjet's message history has no message with this CustomID (it may lag behind the send)";
    out.set(id, data.length ? found : deliveryUnknownResult(why));
  }
  return out;
}

/** The history entries Mailjet holds for one CustomID (one per recipient). */
async function historyOf(id: string, token: string, params: EmailParams, ctx: RunContext): Promise<HistoryEntry[]> {
  const { mailjet } = ctx.config;
  const url = new URL(`${mailjet.baseUrl}/v3/REST/message`);
  url.searchParams.set("CustomID", id);
  url.searchParams.set("ShowCustomID", "true");
  url.searchParams.set("ShowContactAlt", "true");
  const result = await httpRequest({
    upstream: UPSTREAM,
    method: "GET",
    url: url.toString(),
    headers: { authorization: `Basic ${token}`, accept: "application/json" },
    timeoutMs: mailjet.timeoutMs,
    retry: mailjet.retry,
    shouldRetry: retryReads,
    secrets: [params.password, token],
    pool: ctx.config.pool,
    signal: ctx.signal,
  });
  if (result.error) throw result.error;
  const { status, body } = result.response;
  let data: HistoryEntry[] | undefined;
  try {
    const parsed = parseJson(body) as { Data?: unknown };
    if (Array.isArray(parsed?.Data)) data = parsed.Data as HistoryEntry[];
  } catch {
    data = undefined;
  }
  if (status === 200 && data) return data;
  throw new ChainmailError(
    status === 401 || status === 403 ? "UPSTREAM_AUTH" : "UPSTREAM_BAD_RESPONSE",
    `Mailjet's message history answered HTTP ${status} for CustomID ${id}.`,
    {
      hint: "The message's fate stays open; it is looked up again later.",
      details: { upstream: UPSTREAM, status },
    },
  );
}
