/**
 * A token's metadata document (ERC-721 / ERC-1155 metadata JSON) read from the URI its contract states: a `data:`
 * URI decoded in place, `ipfs://` (and `ar://`) through a gateway, `http(s)://` by a bounded, guarded GET
 * (metadata-fetch.ts, or a workflow host's engine: pool-fetch.ts). Only a JSON object of an expected content type is read, and of it only `name` and `image`
 * (an https URL, `ipfs://` rewritten through the gateway, never a private address): the rest of a document written
 * by a stranger is not looked at.
 */
import { type PrivateAllowance, urlRefusal } from "./address-guard.js";
import { decodeDataUri } from "./data-uri.js";

/** Redirects a metadata fetch follows at most. */
export const MAX_REDIRECTS = 3;

/** What a fetch of metadata came to: the body, or why there is none. */
export type Fetched =
  | { ok: true; url: string; contentType: string; body: Buffer }
  | { ok: false; url: string; why: string };

export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
  allowPrivate: PrivateAllowance;
  signal?: AbortSignal | undefined;
}

/**
 * One bounded GET, redirects followed and each checked: metadata-fetch.ts in a process of its own (every resolved
 * address checked too), pool-fetch.ts in a workflow host (through the host's engine and its own guards).
 */
export type MetadataFetch = (url: string, limits: FetchLimits) => Promise<Fetched>;

export interface MetadataSettings {
  fetch: MetadataFetch;
  ipfsGateway: string;
  allowPrivate: PrivateAllowance;
  metadataTimeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
}

export interface TokenMetadata {
  name?: string | undefined;
  /** An https URL a mail may show. */
  image?: string | undefined;
}

/** Content types a metadata document comes with: JSON, or what gateways and buckets serve any file as. */
const JSON_TYPES =
  /^(application\/json|text\/json|application\/[a-z0-9.+-]+\+json|text\/plain|application\/octet-stream|)$/;

const MAX_NAME = 200;
const MAX_URL = 2048;

/** `ipfs://…` and `ar://…` as gateway URLs; other URIs as they are. */
export function gatewayUrl(uri: string, gateway: string): string {
  const ipfs = /^ipfs:\/\/(?:ipfs\/)?(.+)$/i.exec(uri);
  if (ipfs) return `${gateway.endsWith("/") ? gateway : `${gateway}/`}${ipfs[1]}`;
  const arweave = /^ar:\/\/(.+)$/i.exec(uri);
  if (arweave) return `https://arweave.net/${arweave[1]}`;
  return uri;
}

/** The token's name and image, or why there are none (a refusal or a failure, for the log). */
export async function readMetadata(uri: string, settings: MetadataSettings): Promise<TokenMetadata | string> {
  const trimmed = uri.trim();
  let contentType: string;
  let body: Buffer;
  if (/^data:/i.test(trimmed)) {
    const decoded = decodeDataUri(trimmed, settings.maxBytes);
    if (!decoded) return "a data: URI that does not decode within the size limit";
    ({ mediaType: contentType, bytes: body } = decoded);
  } else {
    const fetched = await settings.fetch(gatewayUrl(trimmed, settings.ipfsGateway), {
      timeoutMs: settings.metadataTimeoutMs,
      maxBytes: settings.maxBytes,
      allowPrivate: settings.allowPrivate,
      signal: settings.signal,
    });
    if (!fetched.ok) return `${fetched.url}: ${fetched.why}`;
    ({ contentType, body } = fetched);
  }
  if (!JSON_TYPES.test(contentType)) return `metadata of content type ${contentType}, not JSON`;
  const document = parseObject(body);
  if (!document) return "metadata that is not a JSON object";
  return metadataOf(document, settings);
}

function parseObject(body: Buffer): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `name` and `image` (or `image_url`) of a document, when they are what they should be. */
export function metadataOf(document: Record<string, unknown>, settings: MetadataSettings): TokenMetadata {
  const field = (name: string) => (Object.hasOwn(document, name) ? document[name] : undefined);
  const name = field("name");
  const image = [field("image"), field("image_url")].find((v) => typeof v === "string" && v.trim() !== "");
  return {
    name: typeof name === "string" ? cleanText(name, MAX_NAME) || undefined : undefined,
    image: typeof image === "string" ? imageUrl(image.trim(), settings) : undefined,
  };
}

/**
 * Text from a contract or a metadata document, fit for a mail: one line without control or format characters (bidi
 * overrides among them), at most `max` characters (code points: a pair is never cut in two).
 */
export function cleanText(text: string, max: number): string {
  // Lone surrogates (Cs) too: no transport can carry them.
  const line = text
    .replace(/[\p{Cc}\p{Cf}\p{Cs}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const points = [...line];
  return points.length > max ? `${points.slice(0, max - 1).join("")}…` : line;
}

/** An image a mail may show: https, no private address, no credentials, bounded; `ipfs://` through the gateway. */
function imageUrl(uri: string, settings: MetadataSettings): string | undefined {
  const url = gatewayUrl(uri, settings.ipfsGateway);
  if (url.length > MAX_URL) return undefined;
  if (urlRefusal(url, { allowPrivate: settings.allowPrivate, httpsOnly: true })) return undefined;
  return new URL(url).toString();
}
