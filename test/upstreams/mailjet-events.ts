/**
 * A Mailjet Event API emulator: posts event callbacks the way Mailjet documents them (guides/_event-api.md), to a
 * callback URL that may carry Basic credentials (`http://user:pass@host/events/mailjet`): version 1 posts one event
 * per request, version 2 groups them into arrays; any answer but 200 (or no answer) is retried, every
 * `retryDelayMs`, up to `retries` times (Mailjet: every 10 minutes up to 10 times, or every 30 s for 24 h).
 */
import { request } from "undici";

export interface MailjetEventOptions {
  version: 1 | 2;
  /** Events per POST in version 2 (Mailjet: about a second's worth). */
  groupSize?: number;
  retries?: number;
  retryDelayMs?: number;
}

export interface Delivery {
  events: object[];
  /** Each attempt's status, or "no answer". */
  attempts: (number | "no answer")[];
  delivered: boolean;
}

/** A Mailjet event of one kind, with the fields Mailjet sends for it. */
export function mailjetEvent(
  kind: string,
  fields: { MessageID: number | bigint; email: string; time: number; CustomID?: string; Payload?: string },
): Record<string, unknown> {
  const base = {
    event: kind,
    time: fields.time,
    MessageID: fields.MessageID,
    Message_GUID: `guid-${fields.MessageID}`,
    email: fields.email,
    mj_campaign_id: 7,
    mj_contact_id: 42,
    customcampaign: "",
    CustomID: fields.CustomID ?? "",
    Payload: fields.Payload ?? "",
  };
  switch (kind) {
    case "open":
      return { ...base, ip: "127.0.0.1", geo: "FR", agent: "Mozilla/5.0" };
    case "click":
      return { ...base, url: "https://example.com/", ip: "127.0.0.1", geo: "FR", agent: "Mozilla/5.0" };
    case "bounce":
      return { ...base, blocked: false, hard_bounce: true, error_related_to: "recipient", error: "user unknown" };
    case "blocked":
      return { ...base, error_related_to: "recipient", error: "user unknown" };
    case "spam":
      return { ...base, source: "JMRPP" };
    default:
      return base;
  }
}

/** Integers beyond 2^53 written as JSON numbers, as Mailjet writes MessageIDs. */
const body = (value: unknown) =>
  JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `@@${v}@@` : v)).replace(/"@@(\d+)@@"/g, "$1");

/** Posts `events` to `callbackUrl` as Mailjet would; resolves once each request got a 200 or ran out of retries. */
export async function postEvents(
  callbackUrl: string,
  events: readonly object[],
  options: MailjetEventOptions,
): Promise<Delivery[]> {
  const url = new URL(callbackUrl);
  const auth =
    url.username || url.password
      ? {
          authorization: `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`,
        }
      : {};
  url.username = "";
  url.password = "";
  const groups =
    options.version === 1
      ? events.map((e) => [e])
      : Array.from({ length: Math.ceil(events.length / (options.groupSize ?? 50)) }, (_, i) =>
          events.slice(i * (options.groupSize ?? 50), (i + 1) * (options.groupSize ?? 50)),
        );
  const deliveries: Delivery[] = [];
  for (const group of groups) {
    const delivery: Delivery = { events: group, attempts: [], delivered: false };
    const text = body(options.version === 1 ? group[0] : group);
    for (let attempt = 0; attempt <= (options.retries ?? 10) && !delivery.delivered; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs ?? 10));
      try {
        const res = await request(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...auth },
          body: text,
          headersTimeout: 5_000,
          bodyTimeout: 5_000,
        });
        await res.body.text();
        delivery.attempts.push(res.statusCode);
        delivery.delivered = res.statusCode === 200;
      } catch {
        delivery.attempts.push("no answer");
      }
    }
    deliveries.push(delivery);
  }
  return deliveries;
}
