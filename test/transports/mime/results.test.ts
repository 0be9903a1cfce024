/**
 * src/transports/mime/results.ts on its own: the ids the MIME transports hand out (64-bit MessageIDs beyond 2^53,
 * ordered by time) and a message's success entry in Mailjet's shape (sandbox values, only accepted recipients).
 */
import { describe, expect, it } from "vitest";
import type { RenderedMessage } from "../../../src/transports/mime/render.js";
import { newMessageNumber, successEntry } from "../../../src/transports/mime/results.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const EPOCH_2020 = 1_577_836_800_000n;

const message: RenderedMessage = {
  index: 0,
  messageId: "<m@chainmail.test>",
  envelope: { from: "s@chainmail.test", to: ["a@example.test", "B@example.test", "c@example.test", "d@example.test"] },
  recipients: { To: ["a@example.test", "B@example.test"], Cc: ["c@example.test"], Bcc: ["d@example.test"] },
  customId: "order-9",
  from: "s@chainmail.test",
  subject: "S",
  raw: Buffer.from("raw"),
};

describe("newMessageNumber", () => {
  it("message numbers are unique 64-bit integers beyond 2^53", () => {
    const ids = Array.from({ length: 1000 }, () => newMessageNumber());
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) {
      expect(id > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
      expect(id < 2n ** 63n).toBe(true);
    }
  });

  it("carries the milliseconds since 2020 in its high bits, so later ids are larger", () => {
    const before = BigInt(Date.now());
    const id = newMessageNumber();
    const after = BigInt(Date.now());
    const ms = (id >> 22n) + EPOCH_2020;
    expect(ms >= before && ms <= after).toBe(true);
  });
});

describe("successEntry", () => {
  it("gives every recipient of each list a UUID, a fresh MessageID and its href; the CustomID is kept", () => {
    const entry = successEntry(message, { href: (id) => `file:///outbox/${id}` });
    expect(entry.Status).toBe("success");
    expect(entry.CustomID).toBe("order-9");
    expect(entry.To!.map((r) => r.Email)).toEqual(["a@example.test", "B@example.test"]);
    expect(entry.Cc!.map((r) => r.Email)).toEqual(["c@example.test"]);
    expect(entry.Bcc!.map((r) => r.Email)).toEqual(["d@example.test"]);
    const all = [...entry.To!, ...entry.Cc!, ...entry.Bcc!];
    for (const r of all) {
      expect(r.MessageUUID).toMatch(UUID);
      expect(typeof r.MessageID).toBe("bigint");
      expect(r.MessageHref).toBe(`file:///outbox/${r.MessageID}`);
    }
    expect(new Set(all.map((r) => r.MessageID)).size).toBe(4);
    expect(new Set(all.map((r) => r.MessageUUID)).size).toBe(4);
  });

  it("sandbox: Mailjet's SandboxMode values (empty UUID, MessageID 0, empty href)", () => {
    const entry = successEntry(message, { href: () => "unused", sandbox: true });
    expect(entry.To).toEqual([
      { Email: "a@example.test", MessageUUID: "", MessageID: 0, MessageHref: "" },
      { Email: "B@example.test", MessageUUID: "", MessageID: 0, MessageHref: "" },
    ]);
  });

  it("lists only the accepted recipients (matched by lower-case address)", () => {
    const accepted = new Set(["b@example.test", "d@example.test"]);
    const entry = successEntry(message, { href: String, accepted });
    expect(entry.To!.map((r) => r.Email)).toEqual(["B@example.test"]);
    expect(entry.Cc).toEqual([]);
    expect(entry.Bcc!.map((r) => r.Email)).toEqual(["d@example.test"]);
  });
});
