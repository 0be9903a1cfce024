/**
 * `data:` URIs of token metadata (src/enrichment/data-uri.ts): what base64 or percent-encoding wrote decodes back
 * to the same bytes and media type, whitespace in base64 included; anything over the size limit or malformed is
 * undefined; no input throws. Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeDataUri } from "../../src/enrichment/data-uri.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 36);
const options = { numRuns: RUNS, seed: SEED };

const mediaType = fc.constantFrom("application/json", "Application/JSON", "text/plain", "image/svg+xml");
const params = fc.constantFrom("", ";charset=utf-8", ";utf8", ";charset=UTF-8;foo=bar");

describe("data: URIs", () => {
  it("base64: any bytes within the limit decode back, whitespace or percent-escapes in the text allowed", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        mediaType,
        params,
        fc.constantFrom("plain", "spaced", "escaped"),
        (bytes, type, extra, form) => {
          let text = Buffer.from(bytes).toString("base64");
          if (form === "spaced") text = text.replace(/(.{7})/g, "$1\n ");
          if (form === "escaped")
            text = text.replace(/[+/=]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
          const decoded = decodeDataUri(`data:${type}${extra};base64,${text}`, 600);
          expect(decoded?.mediaType).toBe(type.toLowerCase());
          expect(decoded && [...decoded.bytes]).toEqual([...bytes]);
        },
      ),
      options,
    );
  });

  it("percent-encoded (or bare) text decodes to its UTF-8 bytes", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 2 }), mediaType, fc.boolean(), (json, type, encoded) => {
        const body = encoded ? encodeURIComponent(json) : json.replace(/%/g, "%25");
        const decoded = decodeDataUri(`data:${type};utf8,${body}`, 4096);
        expect(decoded?.bytes.toString("utf8")).toBe(json);
      }),
      options,
    );
  });

  it("is undefined past the size limit, in either encoding", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 2, maxLength: 400 }), (bytes) => {
        const limit = bytes.length - 1;
        const base64 = Buffer.from(bytes).toString("base64");
        expect(decodeDataUri(`data:application/json;base64,${base64}`, limit)).toBeUndefined();
        const percent = [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
        expect(decodeDataUri(`data:application/json,${percent}`, limit)).toBeUndefined();
        expect(decodeDataUri(`data:application/json,${percent}`, bytes.length)?.bytes.length).toBe(bytes.length);
      }),
      options,
    );
  });

  it("never throws, and what it decodes is within the limit", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.nat({ max: 300 }), (tail, limit) => {
        for (const uri of [`data:${tail}`, `data:application/json;base64,${tail}`, `data:,${tail}`, tail]) {
          const decoded = decodeDataUri(uri, limit);
          if (decoded) expect(decoded.bytes.length).toBeLessThanOrEqual(limit);
        }
      }),
      options,
    );
  });

  it("refuses what is not a data: URI, a broken escape, bad base64 and a media type that is not one", () => {
    for (const uri of [
      "https://example.com/1.json",
      "data:application/json",
      "data:application/json,%7",
      "data:application/json,%zz",
      "data:application/json;base64,@@@@",
      "data:application/json;base64,YQ===",
      "data:not a type,{}",
    ]) {
      expect(decodeDataUri(uri, 1024), uri).toBeUndefined();
    }
    expect(decodeDataUri("data:,hello", 1024)?.mediaType).toBe("text/plain");
  });
});
