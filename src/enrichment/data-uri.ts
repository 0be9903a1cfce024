/**
 * `data:` URIs (RFC 2397), as on-chain NFTs return their metadata from `tokenURI`: `data:application/json;base64,…`
 * or the JSON itself percent-encoded (`data:application/json,%7B…` or `;utf8,{…}`). Decoded within a size limit;
 * anything malformed is undefined, never thrown. No I/O.
 */

export interface DataUri {
  /** The media type in lower case, without parameters (`text/plain` when the URI names none). */
  mediaType: string;
  bytes: Buffer;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;
/** Bytes of URI text a percent-escape stands for at most: the text is never longer than 3× what it decodes to. */
const PERCENT_TEXT_PER_BYTE = 3;

/** The decoded bytes and media type of a `data:` URI of at most `maxBytes` decoded bytes; undefined otherwise. */
export function decodeDataUri(uri: string, maxBytes: number): DataUri | undefined {
  if (!/^data:/i.test(uri)) return undefined;
  const comma = uri.indexOf(",");
  if (comma < 0) return undefined;
  const header = uri
    .slice(5, comma)
    .split(";")
    .map((part) => part.trim().toLowerCase());
  const base64 = header.length > 1 && header[header.length - 1] === "base64";
  const mediaType = header[0] || "text/plain";
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(mediaType)) return undefined;
  const body = uri.slice(comma + 1);
  if (base64) {
    // Spaces and line breaks are allowed in base64 text; percent-escaped base64 is decoded first.
    if (body.length > (Math.ceil(maxBytes / 3) * 4 + 2) * PERCENT_TEXT_PER_BYTE) return undefined;
    const text = body.includes("%") ? percentDecode(body)?.toString("latin1") : body;
    if (text === undefined) return undefined;
    const compact = text.replace(/\s+/g, "");
    if (compact.length > Math.ceil(maxBytes / 3) * 4) return undefined;
    if (!BASE64.test(compact) && !BASE64URL.test(compact)) return undefined;
    const bytes = Buffer.from(compact, BASE64.test(compact) ? "base64" : "base64url");
    return bytes.length <= maxBytes ? { mediaType, bytes } : undefined;
  }
  if (body.length > maxBytes * PERCENT_TEXT_PER_BYTE) return undefined;
  const bytes = percentDecode(body);
  if (!bytes || bytes.length > maxBytes) return undefined;
  return { mediaType, bytes };
}

/** Percent-decoding to bytes (any byte sequence, not only UTF-8); a `%` not followed by two hex digits fails. */
function percentDecode(text: string): Buffer | undefined {
  const raw = Buffer.from(text, "utf8");
  const out = Buffer.alloc(raw.length);
  let length = 0;
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i]!;
    if (byte !== 0x25) {
      out[length++] = byte;
      continue;
    }
    const hex = raw.subarray(i + 1, i + 3).toString("latin1");
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return undefined;
    out[length++] = Number.parseInt(hex, 16);
    i += 2;
  }
  return out.subarray(0, length);
}
