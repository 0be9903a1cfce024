/**
 * The new templates of a watch file, by property: a retraction's (`retract_subject`/`retract_text`/`retract_html`)
 * and a capped rule's hour digest (`item_text`/`item_html` with `max_per_hour`). Whatever they hold (any UTF-16,
 * lone surrogates and control characters included), a file the watch accepts makes emails that `email-send` sends
 * through the outbox, and one it refuses names each field at fault. Fixed seed (PROPS_SEED); PROPS_RUNS cases.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ChainmailError, type Violation } from "../../src/core/errors.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { parseWatchConfig } from "../../src/watch/config.js";
import { overflowMessage, retractionMessage } from "../../src/watch/render.js";
import { followUpIdOf } from "../../src/watch/run.js";
import { sendMails } from "../../src/watch/send.js";
import { testConfig } from "../support/helpers.js";
import { CONTRACT_721, CONTRACT_1155, realRecords, syntheticRecords } from "../upstreams/nftport-data.js";

const settings = { numRuns: Number(process.env.PROPS_RUNS ?? 60), seed: Number(process.env.PROPS_SEED ?? 35) };
const RECORDS = [
  ...realRecords(),
  ...syntheticRecords(CONTRACT_721, 12),
  ...syntheticRecords(CONTRACT_1155, 12, 16_000_500, true),
] as unknown as TransactionRecord[];

const outbox = mkdtempSync(join(tmpdir(), "chainmail-watch-retract-props-"));
afterAll(() => rmSync(outbox, { recursive: true, force: true }));
const sendConfig = testConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox });

/** Any UTF-16 code unit (lone surrogates and control characters included), with these template pieces among them. */
const anyText = (maxLength: number, names: readonly string[]) =>
  fc
    .array(
      fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
        { weight: 2, arbitrary: fc.constantFrom(...names.map((n) => `{{var:${n}}}`)) },
        { weight: 4, arbitrary: fc.constantFrom("a", " ", "é", "😀", "<b>", "\r\n") },
      ),
      { maxLength },
    )
    .map((parts) => parts.join(""));
const retractText = (maxLength: number) => anyText(maxLength, ["summary", "token_ids", "transaction_hash", "count"]);
const itemText = (maxLength: number) => anyText(maxLength, ["summary", "token_id", "price"]);

const file = fc
  .record(
    {
      retract_subject: retractText(20),
      retract_text: retractText(30),
      retract_html: retractText(30),
      item_text: itemText(20),
      item_html: itemText(20),
    },
    { requiredKeys: [] },
  )
  .map((parts) => ({
    from: { Email: "w@example.com" },
    rules: [
      {
        id: "r",
        type: ["all"],
        retract: true,
        max_per_hour: 5,
        mail: { to: [{ Email: "desk@example.com" }], ...parts },
      },
    ],
  }));

describe("a retraction's and an hour digest's templates", () => {
  it("make emails email-send sends when the watch accepts the file; a refusal names each field at fault", async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        file,
        fc.array(fc.constantFrom(...RECORDS), { minLength: 1, maxLength: 4 }),
        async (value, records) => {
          let config: ReturnType<typeof parseWatchConfig>;
          try {
            config = parseWatchConfig(value, "nftport");
          } catch (err) {
            expect(err).toBeInstanceOf(ChainmailError);
            const { details } = (err as ChainmailError).toPayload();
            expect(details.code).toBe("invalid_input");
            for (const v of details.violations as Violation[]) expect(v.field).toMatch(/^rules\[0\]\.mail\./);
            return;
          }
          accepted++;
          const rule = config.rules[0]!;
          const keys = records.map((_, i) => `k${i}`);
          const messages = [
            retractionMessage(rule, records, followUpIdOf(rule.id, "r", keys)),
            overflowMessage(rule, records, followUpIdOf(rule.id, "h", keys)),
          ];
          for (const m of messages) expect((m.Subject ?? "").length).toBeLessThanOrEqual(255);
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
        },
      ),
      settings,
    );
    expect(accepted).toBeGreaterThan(settings.numRuns / 4);
  });

  it("by default, a retraction names every removed token and its transaction", () => {
    const config = parseWatchConfig({
      from: { Email: "w@example.com" },
      rules: [{ id: "r", type: ["all"], retract: true, mail: { to: [{ Email: "a@example.com" }] } }],
    });
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...RECORDS), { minLength: 1, maxLength: 6 }), (records) => {
        const message = retractionMessage(config.rules[0]!, records, "cw.r.rx");
        for (const r of records as unknown as Record<string, any>[]) {
          const tokenId = String(r.nft?.token_id ?? r.token_id);
          expect(message.TextPart).toContain(tokenId);
          if (r.transaction_hash) expect(message.TextPart).toContain(r.transaction_hash);
        }
      }),
      settings,
    );
  });
});
