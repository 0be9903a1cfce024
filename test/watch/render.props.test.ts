/**
 * Property-based tests of what a watch file turns into: every file the watch accepts makes emails that `email-send`
 * sends (through the outbox), whatever its templates and names hold (any UTF-16, lone surrogates and control
 * characters included) — a file whose emails could not go out is refused at start, naming the field; and a
 * `{{var:name:"default"}}` takes its default wherever the record lacks the value. Over real NFTPort records and
 * synthetic ones of every shape.
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 60).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ChainmailError, type Violation } from "../../src/core/errors.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { parseWatchConfig } from "../../src/watch/config.js";
import { RECORD_VARIABLES, recordVariables } from "../../src/watch/records.js";
import { digestMessage, eachMessage } from "../../src/watch/render.js";
import { sendMails } from "../../src/watch/send.js";
import { customIdOf } from "../../src/watch/watch.js";
import { testConfig } from "../support/helpers.js";
import { CONTRACT_721, CONTRACT_1155, realRecords, syntheticRecords } from "../upstreams/nftport-data.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 60);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);
const settings = { numRuns: RUNS, seed: SEED };

const RECORDS = [
  ...realRecords(),
  ...syntheticRecords(CONTRACT_721, 12),
  ...syntheticRecords(CONTRACT_1155, 12, 16_000_500, true),
] as unknown as TransactionRecord[];
const record = fc.constantFrom(...RECORDS);

const outbox = mkdtempSync(join(tmpdir(), "chainmail-watch-render-"));
afterAll(() => rmSync(outbox, { recursive: true, force: true }));
const sendConfig = testConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox });

/** Any UTF-16 code unit (lone surrogates and control characters included), with template pieces among them. */
const unit = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.constantFrom("{{var:summary}}", '{{var:marketplace:"none"}}', "{{var:price}}", "\r\n") },
  { weight: 4, arbitrary: fc.constantFrom("a", " ", "é", "😀", "<b>") },
);
const anyText = (maxLength: number) => fc.array(unit, { maxLength }).map((parts) => parts.join(""));

const email = fc
  .tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/), fc.constantFrom("example.com", "chainmail.test"))
  .map(([local, domain]) => `${local}@${domain}`);
const recipient = fc.record({ Email: email, Name: anyText(30) }, { requiredKeys: ["Email"] });
const mail = fc.record(
  {
    to: fc.array(recipient, { minLength: 1, maxLength: 3 }),
    cc: fc.array(recipient, { maxLength: 2 }),
    subject: anyText(40),
    text: anyText(80),
    html: anyText(80),
  },
  { requiredKeys: ["to"] },
);
const file = fc
  .tuple(mail, recipient, fc.constantFrom("each" as const, "digest" as const), anyText(20))
  .map(([m, from, mode, item]) => ({
    from,
    rules: [
      {
        id: "r",
        type: ["all"],
        mode,
        ...(mode === "digest" ? { digest: { records: 3 } } : {}),
        mail: mode === "digest" ? { ...m, item_text: item, item_html: item } : m,
      },
    ],
  }));

describe("a watch file", () => {
  it("that the watch accepts makes emails that email-send sends; one it refuses names each field at fault", async () => {
    await fc.assert(
      fc.asyncProperty(file, fc.array(record, { minLength: 1, maxLength: 3 }), async (value, records) => {
        let config: ReturnType<typeof parseWatchConfig>;
        try {
          config = parseWatchConfig(value, "nftport");
        } catch (err) {
          expect(err).toBeInstanceOf(ChainmailError);
          const { details } = (err as ChainmailError).toPayload();
          expect(details.code).toBe("invalid_input");
          for (const v of details.violations as Violation[]) expect(v.field).toMatch(/^(from|rules\[0\]\.mail)\./);
          return;
        }
        const rule = config.rules[0]!;
        const messages =
          rule.mode === "each"
            ? records.map((r, i) => eachMessage(rule, r, customIdOf(rule.id, [`k${i}`])))
            : [
                digestMessage(
                  rule,
                  records,
                  customIdOf(
                    rule.id,
                    records.map((_, i) => `k${i}`),
                  ),
                ),
              ];
        const mails = messages.map((message) => ({
          customId: message.CustomID!,
          rule: rule.id,
          state: "pending" as const,
          message,
          attempts: 1,
        }));
        const results = await sendMails(mails, { config: sendConfig });
        for (const r of results)
          expect({ state: r.state, errors: r.result.Errors }).toEqual({ state: "sent", errors: undefined });
      }),
      settings,
    );
  });

  it("refuses a lone surrogate in a subject at start, naming the field", () => {
    const value = {
      from: { Email: "w@example.com" },
      rules: [{ id: "r", mail: { to: [{ Email: "a@example.com" }], subject: "Hi \ud800" } }],
    };
    expect(() => parseWatchConfig(value)).toThrow(/rules\[0\]\.mail\.subject holds a lone surrogate/);
  });
});

describe('{{var:name:"default"}} in a watch template', () => {
  it("takes the default wherever the record lacks the value, and the value wherever it has one", () => {
    const fallback = fc.stringMatching(/^[A-Za-z0-9 .,!-]{1,20}$/);
    fc.assert(
      fc.property(record, fc.constantFrom(...RECORD_VARIABLES), fallback, (r, name, text) => {
        const config = parseWatchConfig({
          from: { Email: "w@example.com" },
          rules: [
            {
              id: "r",
              type: ["all"],
              mail: {
                to: [{ Email: "a@example.com" }],
                subject: `[{{var:${name}:"${text}"}}]`,
                text: `[{{var:${name}:"${text}"}}]`,
                html: `[{{var:${name}:"${text}"}}]`,
              },
            },
          ],
        });
        const message = eachMessage(config.rules[0]!, r, "cw.r.x");
        const value = recordVariables(r, "r")[name]!;
        const expected = value === "" ? text : value;
        expect(message.TextPart).toBe(`[${expected}]`);
        expect(message.Subject).toBe(`[${expected}]`);
        if (value === "") expect(message.HTMLPart).toBe(`[${text}]`);
      }),
      settings,
    );
  });

  it("renders a transfer's missing marketplace as the default, so the subject is never empty", () => {
    const transfer = RECORDS.find((r) => r.type === "transfer")!;
    const config = parseWatchConfig({
      from: { Email: "w@example.com" },
      rules: [
        {
          id: "r",
          type: ["transfer"],
          mail: { to: [{ Email: "a@example.com" }], subject: '{{var:marketplace:"no marketplace"}}' },
        },
      ],
    });
    expect(eachMessage(config.rules[0]!, transfer, "cw.r.x").Subject).toBe("no marketplace");
  });
});
