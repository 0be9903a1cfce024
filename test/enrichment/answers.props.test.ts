/**
 * What a stranger's contract and metadata document may answer (src/enrichment/chain-reads.ts, metadata.ts): an ABI
 * string of any text reads back as that text, and any other answer is undefined or a string within the limit, never
 * a throw; of any JSON document only a one-line name of at most 200 characters without control or format characters
 * and an https image on a public host come out. Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { urlRefusal } from "../../src/enrichment/address-guard.js";
import { abiString } from "../../src/enrichment/chain-reads.js";
import { metadataOf } from "../../src/enrichment/metadata.js";
import { guardedGet } from "../../src/enrichment/metadata-fetch.js";
import { abiStringAnswer } from "../support/enrichment-helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 37);
const options = { numRuns: RUNS, seed: SEED };

const settings = {
  fetch: guardedGet,
  ipfsGateway: "https://ipfs.io/ipfs/",
  allowPrivate: false,
  metadataTimeoutMs: 1_000,
  maxBytes: 1_024,
};

describe("a contract's ABI answers", () => {
  it("an ABI string reads back as its text; past the limit it is undefined", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 120 }), (text) => {
        const answer = `0x${abiStringAnswer(text)}`;
        const bytes = Buffer.byteLength(text, "utf8");
        expect(abiString(answer, 512)).toBe(text);
        if (bytes > 0) expect(abiString(answer, bytes - 1)).toBeUndefined();
      }),
      options,
    );
  });

  it("any other answer never throws and is within the limit", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((b) => `0x${Buffer.from(b).toString("hex")}`),
          fc.string({ maxLength: 80 }),
          fc.constantFrom(null, 7, "0x", `0x${"f".repeat(128)}`, `0x${"0".repeat(62)}20${"f".repeat(64)}`),
        ),
        fc.nat({ max: 100 }),
        (answer, limit) => {
          const text = abiString(answer, limit);
          if (text !== undefined && answer !== null && typeof answer === "string" && answer.length !== 66) {
            expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(limit);
          }
        },
      ),
      options,
    );
  });
});

describe("a metadata document", () => {
  const anyValue = fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.string({ unit: "binary", maxLength: 300 }),
    fc.webUrl({ withQueryParameters: true }),
    fc.constantFrom(
      "ipfs://bafyX/1.png",
      "https://10.0.0.1/x.png",
      "https://[::1]/x.png",
      "http://example.com/x.png",
      "javascript:alert(1)",
      "data:image/png;base64,AAAA",
      "https://user:pw@example.com/x.png",
      `${"😀".repeat(150)}\ud800${"a".repeat(60)}`,
    ),
    fc.jsonValue(),
  );

  it("gives only a clean one-line name and an https image on a public host", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom("name", "image", "image_url", "description", "__proto__", "x"), anyValue),
        (document) => {
          const { name, image } = metadataOf(document, settings);
          if (name !== undefined) {
            expect(name.length).toBeGreaterThan(0);
            expect([...name].length).toBeLessThanOrEqual(200);
            expect(name).not.toMatch(/[\p{Cc}\p{Cf}]|^\s|\s$|\s{2}/u);
            expect(name).not.toMatch(/\p{Cs}/u); // no lone surrogate
          }
          if (image !== undefined) {
            expect(image.startsWith("https://")).toBe(true);
            expect(urlRefusal(image, { allowPrivate: false, httpsOnly: true })).toBeUndefined();
          }
        },
      ),
      options,
    );
  });
});
