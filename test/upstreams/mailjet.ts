/**
 * A local Mailjet-compatible Send API v3.1 server on loopback, following Mailjet's documented behaviour: Basic auth
 * first (401 JSON without ErrorCode; mj-0001 for a suspended key), mj-0002 for malformed JSON,
 * mj-0004 / mj-0003 / mj-0007 for a wrong root, mj-0004 for a known field of the wrong JSON type, Globals merged
 * (an invalid Globals answers `{"Globals":{…}}`), send-0015 above 50 recipients per call, per-message validation
 * (send-0003, mj-0012, mj-0013, mj-0007, mj-0006, send-0008 403, send-0010, send-0012), 200 / 400 (403 when every
 * failure is a 403) with the full `Messages` array in input order, 64-bit MessageIDs beyond 2^53, sandbox
 * answers (`MessageUUID: ""`, `MessageID: 0`, nothing delivered), and 413 HTML above a body size limit.
 *
 * It counts what it "delivered" per recipient address, so tests can assert that nothing went out twice.
 * Faults (429/413 HTML, 500 JSON or empty, slow answers, dropped connections, each optionally after the
 * messages were delivered) are queued with `fault()`, optionally matched against the request body.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseJson, stringifyJson } from "../../src/core/json.js";
import { trickle } from "./trickle.js";

export const API_KEY = "6f1c0f4e2a9b4d7c8e1f0a2b3c4d5e6f";
export const SECRET_KEY = "b7e2c91d4a3f48e6a0c5d9f1e8b27a36";
export const SUSPENDED_KEY = "dead0000dead0000dead0000dead0000";
/** Senders this account may use (send-0008 otherwise): any address of these domains. */
export const SENDER_DOMAINS = ["chainmail.test", "example.com"];
/** Templates this account owns (send-0010 otherwise). */
export const TEMPLATES = [4242, 777];
/** First MessageID handed out: above 2^53, like real ones. */
export const FIRST_MESSAGE_ID = 576460772022727316n;

export interface Fault {
  /** Applies only to a request whose parsed body matches; otherwise the next request takes it. */
  match?: (body: unknown) => boolean;
  /** Process the request normally first (deliver its messages), then apply the rest of the fault. */
  deliver?: boolean;
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (or before the normal answer when no status is given). */
  delayMs?: number;
  /** Close the socket without answering. */
  destroy?: boolean;
  /** Send the status and headers at once, then the body one byte every this many ms (an answer too slow to finish). */
  trickleMs?: number;
}

export interface Delivery {
  email: string;
  messageId: bigint;
  uuid: string;
  customId: string;
  subject: unknown;
  /** When it was delivered (ms since the epoch). */
  at: number;
}

export interface SendRequestLog {
  authorization: string | undefined;
  contentType: string | undefined;
  /** The body as received (text) and parsed (undefined when it was not JSON). */
  text: string;
  body: unknown;
  status: number;
}

export interface MailjetServer {
  url: string;
  requests: SendRequestLog[];
  deliveries: Delivery[];
  /** Delivered messages per recipient address (lower case). */
  deliveredTo: Map<string, number>;
  /** Addresses delivered more than once. */
  duplicates(): string[];
  fault(...faults: Fault[]): void;
  /** Faults queued but not used yet. */
  pendingFaults(): number;
  /** Most requests handled at the same time since the last call (then reset). */
  takeMaxInFlight(): number;
  close(): Promise<void>;
}

export interface MailjetOptions {
  /** Every normal answer leaves this long after its request arrived (for benchmarks). */
  latencyMs?: number;
  /** Bodies above this many bytes get the proxy's 413 HTML page. Default 15 MB. */
  maxBodyBytes?: number;
  /** The message history lists a delivery only this long after it (default 0: at once). */
  historyLagMs?: number;
}

export const html = (status: number, reason: string) => ({
  status,
  body: `<html><body><h1>${status} ${reason}</h1></body></html>`,
  headers: { "content-type": "text/html" },
});
export const TOO_MANY_REQUESTS = html(429, "Too Many Requests");
export const TOO_LARGE = html(413, "Request Entity Too Large");

type Loose = Record<string, unknown>;
type ErrorItem = {
  ErrorIdentifier: string;
  ErrorCode: string;
  StatusCode: number;
  ErrorMessage: string;
  ErrorRelatedTo: string[];
};

const EMAIL = /^[^\s@"(),:;<>[\]\\]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/;
const AUTH_FAILURE =
  "API key authentication/authorization failure. You may be unauthorized to access the API or your API key may be expired. Visit API keys management section to check your keys.";

const isObject = (v: unknown): v is Loose => typeof v === "object" && v !== null && !Array.isArray(v);

function item(code: string, status: number, message: string, related: string[]): ErrorItem {
  return {
    ErrorIdentifier: randomUUID(),
    ErrorCode: code,
    StatusCode: status,
    ErrorMessage: message,
    ErrorRelatedTo: related,
  };
}

/** Globals merge rules (Send API v3.1 docs): objects key-wise, arrays concatenated, scalars replaced. */
function applyGlobals(globals: Loose, message: Loose): Loose {
  const out: Loose = { ...message };
  for (const [key, value] of Object.entries(globals)) {
    const own = message[key];
    if (own === undefined) out[key] = value;
    else if (Array.isArray(value) && Array.isArray(own)) out[key] = [...value, ...own];
    else if (isObject(value) && isObject(own)) out[key] = { ...value, ...own };
  }
  return out;
}

const FIELD_TYPES: Record<string, "object" | "array" | "string" | "integer" | "boolean"> = {
  From: "object",
  Sender: "object",
  ReplyTo: "object",
  To: "array",
  Cc: "array",
  Bcc: "array",
  Subject: "string",
  TextPart: "string",
  HTMLPart: "string",
  TemplateID: "integer",
  TemplateLanguage: "boolean",
  Attachments: "array",
  InlinedAttachments: "array",
  Variables: "object",
  Headers: "object",
  CustomID: "string",
  EventPayload: "string",
  CustomCampaign: "string",
  DeduplicateCampaign: "boolean",
  URLTags: "string",
  Priority: "integer",
};

function typeMismatch(message: Loose): string | undefined {
  for (const [field, type] of Object.entries(FIELD_TYPES)) {
    const v = message[field];
    if (v === undefined) continue;
    const ok =
      type === "object"
        ? isObject(v)
        : type === "array"
          ? Array.isArray(v)
          : type === "integer"
            ? (typeof v === "number" && Number.isInteger(v)) || typeof v === "bigint"
            : typeof v === type;
    if (!ok) return field;
  }
  return undefined;
}

function validateMessage(m: Loose): ErrorItem[] {
  const errors: ErrorItem[] = [];
  const addressErrors = (address: unknown, path: string) => {
    const email = isObject(address) ? address.Email : undefined;
    if (email === undefined || email === null) errors.push(item("mj-0003", 400, "Missing mandatory property.", [path]));
    else if (email === "") errors.push(item("mj-0012", 400, "Empty string not allowed.", [path]));
    else if (typeof email !== "string" || !EMAIL.test(email))
      errors.push(item("mj-0013", 400, `"${String(email)}" is an invalid email address.`, [path]));
  };
  if (!Array.isArray(m.To) || m.To.length === 0) {
    errors.push(item(m.To === undefined ? "mj-0003" : "mj-0007", 400, "Missing mandatory property.", ["To"]));
  }
  for (const list of ["To", "Cc", "Bcc"]) {
    if (!Array.isArray(m[list])) continue;
    (m[list] as unknown[]).forEach((a, j) => {
      addressErrors(a, `${list}[${j}].Email`);
    });
  }
  if (m.From === undefined) errors.push(item("mj-0003", 400, "Missing mandatory property.", ["From"]));
  else addressErrors(m.From, "From.Email");
  if (m.TextPart === undefined && m.HTMLPart === undefined && m.TemplateID === undefined) {
    errors.push(
      item("send-0003", 400, 'At least "HTMLPart", "TextPart" or "TemplateID" must be provided.', [
        "HTMLPart",
        "TextPart",
      ]),
    );
  }
  if (typeof m.Subject === "string" && m.Subject.length > 255)
    errors.push(item("mj-0006", 400, "Characters limit exceeded for the property. Max allowed - 255.", ["Subject"]));
  for (const list of ["Attachments", "InlinedAttachments"]) {
    if (!Array.isArray(m[list])) continue;
    (m[list] as unknown[]).forEach((file, j) => {
      for (const key of list === "Attachments" ? ["ContentType", "Filename", "Base64Content"] : ["Filename"]) {
        const v = isObject(file) ? file[key] : undefined;
        if (v === "" || v === undefined)
          errors.push(item("mj-0012", 400, "Empty string not allowed.", [`${list}[${j}].${key}`]));
      }
    });
  }
  if (m.TemplateID !== undefined && !TEMPLATES.includes(Number(m.TemplateID))) {
    errors.push(
      item("send-0010", 400, `Template id "${m.TemplateID}" doesn't exist for your account.`, ["TemplateID"]),
    );
  }
  if (m.DeduplicateCampaign === true && m.CustomCampaign === undefined) {
    errors.push(
      item("send-0012", 400, "DeduplicateCampaign needs CustomCampaign.", ["CustomCampaign", "DeduplicateCampaign"]),
    );
  }
  if (errors.length === 0 && isObject(m.From) && typeof m.From.Email === "string") {
    const domain = m.From.Email.split("@")[1]?.toLowerCase() ?? "";
    if (!SENDER_DOMAINS.includes(domain)) {
      errors.push(
        item("send-0008", 403, `"${m.From.Email}" is not an authorized sender email address for your account.`, [
          "From",
        ]),
      );
    }
  }
  return errors;
}

export async function startMailjet(options: MailjetOptions = {}): Promise<MailjetServer> {
  const faults: Fault[] = [];
  const requests: SendRequestLog[] = [];
  const deliveries: Delivery[] = [];
  const deliveredTo = new Map<string, number>();
  let nextId = FIRST_MESSAGE_ID;
  let inFlight = 0;
  let maxInFlight = 0;
  const maxBody = options.maxBodyBytes ?? 15 * 1024 * 1024;

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json; charset=UTF-8" });
    res.end(stringifyJson(body));
  };

  /** The normal answer: status and body, delivering messages as a side effect. */
  const answerFor = (req: IncomingMessage, body: unknown, bytes: number): { status: number; body: unknown } => {
    // The front proxy refuses oversized bodies before the API sees them.
    if (bytes > maxBody) return { status: 413, body: TOO_LARGE.body };
    const auth = req.headers.authorization ?? "";
    const decoded = auth.startsWith("Basic ") ? Buffer.from(auth.slice(6), "base64").toString("utf8") : "";
    const colon = decoded.indexOf(":");
    const [user, pass] = colon < 0 ? ["", ""] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    if (user === SUSPENDED_KEY && pass === SECRET_KEY) {
      return {
        status: 401,
        body: {
          ErrorIdentifier: randomUUID(),
          ErrorCode: "mj-0001",
          StatusCode: 401,
          ErrorMessage: "Your account has been suspended.",
        },
      };
    }
    if (user !== API_KEY || pass !== SECRET_KEY) {
      return { status: 401, body: { ErrorIdentifier: randomUUID(), StatusCode: 401, ErrorMessage: AUTH_FAILURE } };
    }
    const flat = (code: string, message: string, related?: string[]) => ({
      status: 400,
      body: {
        ErrorIdentifier: randomUUID(),
        ErrorCode: code,
        StatusCode: 400,
        ErrorMessage: message,
        ...(related ? { ErrorRelatedTo: related } : {}),
      },
    });
    if (body === undefined) return flat("mj-0002", "Malformed JSON, please review the syntax and properties types.");
    if (!isObject(body)) return flat("mj-0004", 'Type mismatch. Expected type "Messages".', ["Messages"]);
    if (body.Messages === undefined || body.Messages === null)
      return flat("mj-0003", "Missing mandatory property.", ["Messages"]);
    if (!Array.isArray(body.Messages)) return flat("mj-0004", 'Type mismatch. Expected type "Messages".', ["Messages"]);
    if (body.Messages.length === 0) return flat("mj-0007", "Empty array not allowed.", ["Messages"]);
    for (const m of body.Messages) {
      if (!isObject(m)) return flat("mj-0004", 'Type mismatch. Expected type "Message".', ["Messages"]);
      const field = typeMismatch(m);
      if (field) return flat("mj-0004", `Type mismatch. Expected type "${FIELD_TYPES[field]}".`, [`Messages.${field}`]);
    }
    const globals = isObject(body.Globals) ? body.Globals : {};
    if (globals.To !== undefined) {
      return {
        status: 400,
        body: { Globals: { Status: "error", Errors: [item("mj-0004", 400, "To is not allowed in Globals.", ["To"])] } },
      };
    }
    const messages = (body.Messages as Loose[]).map((m) => applyGlobals(globals, m));
    const recipients = new Set<string>();
    for (const m of messages) {
      for (const list of ["To", "Cc", "Bcc"]) {
        if (Array.isArray(m[list])) for (const a of m[list] as Loose[]) recipients.add(String(a?.Email).toLowerCase());
      }
    }
    if (recipients.size > 50) {
      return flat("send-0015", "Total number of recipients exceeded. Max allowed - 50.", ["To", "Bcc", "Cc"]);
    }
    const sandbox = body.SandboxMode === true;
    const results = messages.map((m) => {
      const errors = validateMessage(m);
      if (errors.length) return { Errors: errors, Status: "error" };
      const customId = typeof m.CustomID === "string" ? m.CustomID : "";
      const entries = (list: string) =>
        (Array.isArray(m[list]) ? (m[list] as Loose[]) : []).map((a) => {
          const email = String(a.Email);
          if (sandbox) {
            return {
              Email: email,
              MessageUUID: "",
              MessageID: 0,
              MessageHref: "https://api.mailjet.com/v3/REST/message/0",
            };
          }
          const id = nextId++;
          const uuid = randomUUID();
          deliveries.push({ email, messageId: id, uuid, customId, subject: m.Subject, at: Date.now() });
          deliveredTo.set(email.toLowerCase(), (deliveredTo.get(email.toLowerCase()) ?? 0) + 1);
          return {
            Email: email,
            MessageUUID: uuid,
            MessageID: id,
            MessageHref: `https://api.mailjet.com/v3/REST/message/${id}`,
          };
        });
      return { Status: "success", CustomID: customId, To: entries("To"), Cc: entries("Cc"), Bcc: entries("Bcc") };
    });
    const failures = results.filter((r) => r.Status === "error") as { Errors: ErrorItem[] }[];
    const status =
      failures.length === 0 ? 200 : failures.every((f) => f.Errors.every((e) => e.StatusCode === 403)) ? 403 : 400;
    return { status, body: { Messages: results } };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const arrived = performance.now();
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.once("close", () => inFlight--);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const text = raw.toString("utf8");
    let body: unknown;
    try {
      body = parseJson(text);
    } catch {
      body = undefined;
    }
    const log: SendRequestLog = {
      authorization: req.headers.authorization,
      contentType: req.headers["content-type"],
      text,
      body,
      status: 0,
    };
    requests.push(log);
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "GET" && url.pathname === "/v3/REST/message") {
      const answer = history(req, url.searchParams);
      log.status = answer.status;
      return json(res, answer.status, answer.body);
    }
    if (req.method !== "POST" || req.url !== "/v3.1/send") {
      log.status = 404;
      return json(res, 404, { ErrorMessage: "Endpoint not found.", StatusCode: 404 });
    }
    const index = faults.findIndex((f) => !f.match || f.match(body));
    const fault = index >= 0 ? faults.splice(index, 1)[0] : undefined;
    if (fault) {
      const answer = fault.deliver ? answerFor(req, body, raw.length) : undefined;
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
      if (fault.destroy) {
        log.status = -1;
        req.socket.destroy();
        return;
      }
      if (fault.status !== undefined) {
        log.status = fault.status;
        if (fault.trickleMs) return trickle(res, fault.status, fault.body ?? "", fault.trickleMs, fault.headers);
        res.writeHead(fault.status, { "content-type": "application/json; charset=UTF-8", ...fault.headers });
        res.end(fault.body ?? "");
        return;
      }
      if (answer) {
        log.status = answer.status;
        if (fault.trickleMs)
          return trickle(
            res,
            answer.status,
            typeof answer.body === "string" ? answer.body : stringifyJson(answer.body),
            fault.trickleMs,
          );
        return typeof answer.body === "string"
          ? sendHtml(res, answer.status, answer.body)
          : json(res, answer.status, answer.body);
      }
    }
    const answer = answerFor(req, body, raw.length);
    // The answer leaves `latencyMs` after the request arrived: the server's own work is part of that time.
    const wait = (options.latencyMs ?? 0) - (performance.now() - arrived);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    log.status = answer.status;
    if (typeof answer.body === "string") return sendHtml(res, answer.status, answer.body);
    json(res, answer.status, answer.body);
  };

  /**
   * The message history (`GET /v3/REST/message?CustomID=…`, node-mailjet's Message resource): one entry per
   * delivered copy, `{"Count","Total","Data":[{ID, UUID, ContactAlt, CustomID, Status, ArrivedAt}]}`. With
   * `historyLagMs`, copies younger than that are not listed yet (the history trails the sends).
   */
  const history = (req: IncomingMessage, query: URLSearchParams) => {
    const auth = req.headers.authorization ?? "";
    const expected = `Basic ${Buffer.from(`${API_KEY}:${SECRET_KEY}`).toString("base64")}`;
    if (auth !== expected) {
      return { status: 401, body: { ErrorIdentifier: randomUUID(), StatusCode: 401, ErrorMessage: AUTH_FAILURE } };
    }
    const customId = query.get("CustomID");
    const now = Date.now();
    const data = deliveries
      .filter((d) => customId === null || d.customId === customId)
      .filter((d) => now - d.at >= (options.historyLagMs ?? 0))
      .map((d) => ({
        ArrivedAt: new Date(d.at).toISOString(),
        ID: d.messageId,
        UUID: d.uuid,
        ...(query.get("ShowContactAlt") === "true" ? { ContactAlt: d.email } : {}),
        ...(query.get("ShowCustomID") === "true" ? { CustomID: d.customId } : {}),
        Status: "sent",
      }));
    return { status: 200, body: { Count: data.length, Total: data.length, Data: data } };
  };

  const sendHtml = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { "content-type": "text/html" });
    res.end(text);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(stringifyJson({ ErrorIdentifier: randomUUID(), StatusCode: 500, ErrorMessage: String(err) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    deliveries,
    deliveredTo,
    duplicates: () => [...deliveredTo].filter(([, n]) => n > 1).map(([email]) => email),
    fault: (...f) => faults.push(...f),
    pendingFaults: () => faults.length,
    takeMaxInFlight: () => {
      const max = maxInFlight;
      maxInFlight = inFlight;
      return max;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
