/**
 * What joins chainmail to n8n: upstream calls through n8n's request helper (the credential authenticates them),
 * settings from a credential, errors as n8n shows them, exact integers as strings in items.
 */
import {
  type IDataObject,
  type IExecuteFunctions,
  type INodeCredentialDescription,
  type INodeExecutionData,
  type INodeProperties,
  type IPollFunctions,
  type JsonObject,
  NodeApiError,
  NodeOperationError,
  sleep,
} from "n8n-workflow";
import {
  type Answer,
  AttemptTimeout,
  type Config,
  type ErrorPayload,
  hostConfig,
  mailTransports,
  nftSources,
  type SourceEntry,
  settingsEnv,
  type UpstreamPool,
  withExactStrings,
  workflowSources,
} from "../../../src/workflow/index.js";

type Functions = IExecuteFunctions | IPollFunctions;

/** The n8n credential of each source and transport a package offers, from its definition (its `n8nCredential`). */
export const CREDENTIALS: Record<string, string> = Object.fromEntries(
  [...nftSources, ...mailTransports].flatMap((entry) => (entry.n8nCredential ? [[entry.id, entry.n8nCredential]] : [])),
);

/** Sources the nodes offer: the portable ones that have an n8n credential, in the order they are shown. */
export const nodeSources = (): SourceEntry[] => workflowSources().filter((source) => source.n8nCredential);

/** The credential of each source a node offers, asked for only when that source is chosen. */
export const sourceCredentials = (): INodeCredentialDescription[] =>
  nodeSources().map((source) => ({
    name: source.n8nCredential!,
    required: true,
    displayOptions: { show: { source: [source.id] } },
  }));

/** The "Source" parameter of the nodes that read NFT activity; `description` says what is read from it. */
export const sourceParameter = (description: string): INodeProperties => ({
  displayName: "Source",
  name: "source",
  type: "options",
  noDataExpression: true,
  options: nodeSources().map((source) => ({
    name: source.title,
    value: source.id,
    description: source.description,
  })),
  default: "nftport",
  description,
});

/** Headers chainmail sets for a key that the credential sets instead (n8n's generic authentication). */
const CREDENTIAL_HEADERS = new Set(["authorization", "x-api-key"]);

/** Error codes of a connection that failed, as axios and Node report them; the first one found wins. */
const TIMEOUT_CODES = new Set(["ECONNABORTED", "ETIMEDOUT"]);

/** The code of a failed request, looked for on the error and its causes (n8n wraps axios's error). */
function codeOf(error: unknown): { code: string; timeout: boolean } {
  let current: unknown = error;
  let found: string | undefined;
  for (let depth = 0; current && typeof current === "object" && depth < 6; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof message === "string" && /timeout of \d+ms exceeded/.test(message))
      return { code: "ETIMEDOUT", timeout: true };
    if (typeof code === "string" && /^[A-Z][A-Z_]+$/.test(code)) found ??= code;
    current = (current as { cause?: unknown }).cause;
  }
  return { code: found ?? "UNKNOWN", timeout: found !== undefined && TIMEOUT_CODES.has(found) };
}

/** Whether `url` is under the origin `baseUrl` (a path below it, or it exactly; not a longer host name). */
function isUnder(url: string, baseUrl: string): boolean {
  const base = baseUrl.replace(/\/+$/, "");
  return base !== "" && (url === base || url.startsWith(`${base}/`) || url.startsWith(`${base}?`));
}

/**
 * Upstream calls through n8n's request helpers, which apply its proxy and SSRF settings and record the call. A call
 * to the credential's own API (under `baseUrl`) goes through `httpRequestWithAuthentication` with `credential`: n8n
 * adds the credential's header (chainmail's own is left out). Any other call (OpenSea's optional Ethereum RPC node)
 * goes through `httpRequest` with chainmail's headers alone, so that the credential's key never leaves for another
 * host. Any status comes back as an answer; the body as the bytes that came, so that integers beyond 2^53 are read
 * exactly.
 */
export function n8nPool(fns: Functions, credential: string, baseUrl: string): UpstreamPool {
  return {
    exchange(request) {
      const own = isUnder(request.url, baseUrl);
      const headers: IDataObject = {};
      for (const [name, value] of Object.entries(request.headers ?? {})) {
        if (!own || !CREDENTIAL_HEADERS.has(name.toLowerCase())) headers[name] = value;
      }
      const options = {
        method: request.method,
        url: request.url,
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        timeout: request.timeoutMs,
        returnFullResponse: true,
        ignoreHttpStatusErrors: true,
        encoding: "arraybuffer" as const,
        json: false,
        ...(request.signal ? { abortSignal: request.signal } : {}),
      };
      const sent: Promise<{ statusCode: number; headers: IDataObject; body: unknown }> = own
        ? fns.helpers.httpRequestWithAuthentication.call(fns, credential, options)
        : fns.helpers.httpRequest(options);
      // A failure goes back to chainmail's HTTP client, which makes the node's error of it (an n8n error, where the
      // node reports it); what reaches it here is only the kind of failure and its code, never n8n's error text.
      return sent.then(answerOf, (error: unknown) => Promise.reject(engineError(error)));
    },
    wait: (ms, signal) => sleep(ms, signal),
  };
}

/** An answer as chainmail reads it: the body's bytes as text, header names in lower case. */
function answerOf(answer: { statusCode: number; headers: IDataObject; body: unknown }): Answer {
  const body =
    answer.body === undefined || answer.body === null ? "" : Buffer.from(answer.body as ArrayBuffer).toString("utf8");
  const headers: Answer["headers"] = {};
  for (const [name, value] of Object.entries(answer.headers ?? {})) {
    headers[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : value == null ? undefined : String(value);
  }
  return { status: answer.statusCode, headers, body };
}

/** What a failed request was, as chainmail's HTTP client tells failures apart (a timeout, else a connection code). */
function engineError(error: unknown): Error {
  const { code, timeout } = codeOf(error);
  if (timeout) return new AttemptTimeout();
  return Object.assign(new Error(`the request failed (${code})`), { code });
}

/** The config of one run: the source's (or transport's) credential as chainmail's settings, calls through n8n. */
export async function configFor(fns: Functions, kind: "source" | "mail", id: string): Promise<Config> {
  const entry = kind === "source" ? nftSources.find((s) => s.id === id) : mailTransports.find((t) => t.id === id);
  const credential = CREDENTIALS[id];
  if (!entry || !credential) throw new NodeOperationError(fns.getNode(), `Unknown ${kind} "${id}"`);
  const values = (await fns.getCredentials(credential)) as Record<string, unknown>;
  const variable = kind === "source" ? "NFT_SOURCE" : "EMAIL_TRANSPORT";
  const env = settingsEnv(entry, values, variable);
  // The credential's own origin, as chainmail reads it (the setting named baseUrl, else its default).
  const origin = settingsEnv({ settings: entry.settings.filter((s) => s.key === "baseUrl") }, values);
  return hostConfig(env, n8nPool(fns, credential, Object.values(origin)[0] ?? ""));
}

/** A node's error output as n8n shows it: its message, its code and details (no secret is ever in them). */
export function nodeError(fns: Functions, error: ErrorPayload, itemIndex?: number): NodeApiError | NodeOperationError {
  const details = error.details;
  const description = `chainmail error code: ${details.code}`;
  const at = itemIndex === undefined ? {} : { itemIndex };
  if (details.code === "invalid_input" || details.code === "invalid_continuation") {
    return new NodeOperationError(fns.getNode(), error.error, { ...at, description });
  }
  const status = typeof details.status === "number" ? String(details.status) : undefined;
  return new NodeApiError(fns.getNode(), withExactStrings(details) as JsonObject, {
    ...at,
    message: error.error,
    description,
    ...(status ? { httpCode: status } : {}),
  });
}

/** An item of plain JSON: integers beyond 2^53 as exact decimal strings. */
export const item = (json: unknown, pairedItem?: number): INodeExecutionData => ({
  json: withExactStrings(json) as IDataObject,
  ...(pairedItem === undefined ? {} : { pairedItem: { item: pairedItem } }),
});

/** The item of an error when the node continues on fail (n8n routes it to the error output when there is one). */
export const errorItem = (error: ErrorPayload, pairedItem: number): INodeExecutionData =>
  item({ error: error.error, details: error.details }, pairedItem);
