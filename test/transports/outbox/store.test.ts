/**
 * src/transports/outbox/store.ts on its own, in real directories: a message stored as `<id>.eml` plus one index
 * line (Bcc only there), read back by `listOutbox` and found by `findInOutbox` under any of its keys; what a sender
 * killed midway leaves is finished or removed by `recoverOutbox`. The transport around it is transport.test.ts's.
 */
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson } from "../../../src/core/json.js";
import type { EmailMessage } from "../../../src/schemas/email.js";
import { type RenderedMessage, renderMessage } from "../../../src/transports/mime/render.js";
import {
  fileUrl,
  findInOutbox,
  INDEX_FILE,
  listOutbox,
  newOutboxId,
  type OutboxRecipient,
  openOutbox,
  recoverOutbox,
  storeMessage,
} from "../../../src/transports/outbox/store.js";

let root: string;
let seq = 0;
const newDir = () => join(root, `outbox-${++seq}`);
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "chainmail-outbox-store-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function rendered(extra: Record<string, unknown> = {}): Promise<RenderedMessage> {
  const message = {
    From: { Email: "sales@chainmail.test" },
    To: [{ Email: "alice@example.test" }],
    Cc: [{ Email: "carol@example.test" }],
    Bcc: [{ Email: "dave@example.test" }],
    Subject: "Stored",
    TextPart: "Hello",
    CustomID: "order-1",
    ...extra,
  } as EmailMessage & Record<string, unknown>;
  const out = await renderMessage(message, 0);
  if (!("message" in out)) throw new Error(JSON.stringify(out.errors));
  return out.message;
}
const recipients: OutboxRecipient[] = [
  { Email: "alice@example.test", MessageUUID: "uuid-a", MessageID: 2n ** 62n + 7n },
  { Email: "dave@example.test", MessageUUID: "uuid-d", MessageID: 12 },
];

describe("ids and file URLs", () => {
  it("an id is the UTC time to the millisecond and 6 hex digits, so ids sort by time", () => {
    const id = newOutboxId(new Date("2026-11-21T06:05:12.123Z"));
    expect(id).toMatch(/^20261121T060512123Z-[0-9a-f]{6}$/);
    const ids = [newOutboxId(new Date(2000, 0, 1)), newOutboxId(new Date(2030, 0, 1)), newOutboxId(new Date(2015, 5))];
    expect([...ids].sort()).toEqual([ids[0], ids[2], ids[1]]);
    expect(newOutboxId()).not.toBe(newOutboxId());
  });

  it("fileUrl is the file:// URL of the file under the (resolved) directory", () => {
    expect(fileUrl("rel/outbox", "a b.eml")).toBe(pathToFileURL(resolve("rel/outbox", "a b.eml")).href);
    expect(fileUrl("/o", "x.eml")).toBe("file:///o/x.eml");
  });
});

describe("storeMessage, listOutbox, findInOutbox", () => {
  it("writes the MIME bytes as <id>.eml and one index line; no partial file is left", async () => {
    const dir = newDir();
    await openOutbox(dir);
    const message = await rendered();
    const id = newOutboxId();
    const entry = await storeMessage(dir, id, message, recipients);
    expect(entry).toMatchObject({
      id,
      from: "sales@chainmail.test",
      to: ["alice@example.test"],
      cc: ["carol@example.test"],
      bcc: ["dave@example.test"],
      subject: "Stored",
      custom_id: "order-1",
      message_id: message.messageId,
      file: `${id}.eml`,
      size: message.raw.length,
      recipients,
    });
    expect((await readdir(dir)).sort()).toEqual([`${id}.eml`, INDEX_FILE].sort());
    expect((await readFile(join(dir, `${id}.eml`))).equals(message.raw)).toBe(true);
    const lines = (await readFile(join(dir, INDEX_FILE), "utf8")).split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe("");
    // The index keeps 64-bit MessageIDs exact.
    expect(await listOutbox(dir)).toEqual([entry]);
    expect((parseJson(lines[0]!) as typeof entry).recipients[0]!.MessageID).toBe(2n ** 62n + 7n);
  });

  it("lists oldest first, skips a line cut short by a crash, and reads a missing outbox as empty", async () => {
    const dir = newDir();
    await openOutbox(dir);
    const first = await storeMessage(dir, newOutboxId(), await rendered({ CustomID: "a" }), []);
    await appendFile(join(dir, INDEX_FILE), '{"id":"cut-sh\n\n');
    const second = await storeMessage(dir, newOutboxId(), await rendered({ CustomID: "b" }), []);
    expect((await listOutbox(dir)).map((e) => e.custom_id)).toEqual([first.custom_id, second.custom_id]);
    expect(await listOutbox(join(root, "never-made"))).toEqual([]);
  });

  it("finds a message by its id, its Message-ID (with or without <>), or a recipient's MessageUUID or MessageID", async () => {
    const dir = newDir();
    await openOutbox(dir);
    const message = await rendered();
    const other = await storeMessage(dir, newOutboxId(), await rendered({ CustomID: "other" }), []);
    const entry = await storeMessage(dir, newOutboxId(), message, recipients);
    const bare = message.messageId.slice(1, -1);
    for (const key of [entry.id, message.messageId, bare, "uuid-a", "uuid-d", String(2n ** 62n + 7n), "12"]) {
      const found = await findInOutbox(dir, key);
      expect(found?.entry.id).toBe(entry.id);
      expect(found?.eml.equals(message.raw)).toBe(true);
    }
    expect((await findInOutbox(dir, other.id))?.entry.custom_id).toBe("other");
    expect(await findInOutbox(dir, "nope")).toBeUndefined();
    expect(await findInOutbox(dir, String(2n ** 62n + 8n))).toBeUndefined();
  });

  it("a failed index write removes the partial file and throws: the message was not stored", async () => {
    const dir = newDir();
    await openOutbox(dir);
    // The index cannot be appended to when it is a directory.
    await rm(join(dir, INDEX_FILE), { force: true });
    await mkdir(join(dir, INDEX_FILE));
    await expect(storeMessage(dir, newOutboxId(), await rendered(), [])).rejects.toThrow(/EISDIR/);
    expect(await readdir(dir)).toEqual([INDEX_FILE]);
  });

  it("never overwrites a partial file: a name already taken fails the store, and nothing is indexed", async () => {
    const dir = newDir();
    await openOutbox(dir);
    const id = newOutboxId();
    const taken = `${id}.eml.${hostname().replace(/[^A-Za-z0-9_-]/g, "_")}-${process.pid}.partial`;
    await writeFile(join(dir, taken), "someone else's");
    await expect(storeMessage(dir, id, await rendered(), [])).rejects.toThrow(/EEXIST/);
    expect(await readFile(join(dir, taken), "utf8")).toBe("someone else's");
    expect(await listOutbox(dir)).toEqual([]);
  });
});

describe("what a sender killed midway leaves in the outbox", () => {
  it("a partial file with its index line takes its name; one without is removed once its writer is gone", async () => {
    const dir = newDir();
    await openOutbox(dir);
    const stored = await storeMessage(dir, newOutboxId(), await rendered(), recipients);
    // What a killed sender leaves, as it would name it: after its line (committed), and before (never stored).
    const dead = 2 ** 22 + 12345; // beyond any pid this machine hands out
    const host = hostname().replace(/[^A-Za-z0-9_-]/g, "_");
    const eml = await readFile(join(dir, stored.file));
    await rm(join(dir, stored.file));
    const committed = `${stored.file}.${host}-${dead}.partial`;
    const uncommitted = `20260101T000000000Z-dead01.eml.${host}-${dead}.partial`;
    await writeFile(join(dir, committed), eml);
    await writeFile(join(dir, uncommitted), eml.subarray(0, 40));
    // Left alone: a writer on another host, and one still running here (this test's parent).
    const foreign = `20260101T000000000Z-f00001.eml.elsewhere-${dead}.partial`;
    const live = `20260101T000000000Z-11fe01.eml.${host}-${process.ppid}.partial`;
    await writeFile(join(dir, foreign), "x");
    await writeFile(join(dir, live), "x");

    expect(await recoverOutbox(dir)).toEqual({ finished: [stored.file], removed: [uncommitted] });
    expect((await readdir(dir)).sort()).toEqual([foreign, live, INDEX_FILE, stored.file].sort());
    expect((await readFile(join(dir, stored.file))).equals(eml)).toBe(true);
    // Nothing more to do the second time.
    expect(await recoverOutbox(dir)).toEqual({ finished: [], removed: [] });

    // Finding a committed message whose file has not taken its name yet gives it its name.
    await rm(join(dir, stored.file));
    await writeFile(join(dir, committed), eml);
    expect((await findInOutbox(dir, stored.id))?.eml.equals(eml)).toBe(true);
    expect((await readdir(dir)).sort()).toEqual([foreign, live, INDEX_FILE, stored.file].sort());
  });

  it("a partial named with this process's own id, not being written, is a leftover of an earlier process", async () => {
    const dir = newDir();
    await openOutbox(dir);
    const host = hostname().replace(/[^A-Za-z0-9_-]/g, "_");
    const mine = `20260101T000000000Z-000001.eml.${host}-${process.pid}.partial`;
    await writeFile(join(dir, mine), "x");
    expect(await recoverOutbox(dir)).toEqual({ finished: [], removed: [mine] });
  });

  it("recovering an outbox that does not exist does nothing", async () => {
    expect(await recoverOutbox(join(root, "absent"))).toEqual({ finished: [], removed: [] });
  });
});
