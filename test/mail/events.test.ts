/**
 * Mailjet's event callbacks from an emulator of Mailjet (test/upstreams/mailjet-events.ts) into the real service:
 * both formats, duplicates, out of order, unknown kinds, a malformed body retried and never stored, and a `kill -9`
 * of the service between receiving a callback and answering it: Mailjet's retry lands it, nothing is lost.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { mailStatus } from "../../src/mail/api.js";
import { closeMailStores } from "../../src/mail/open.js";
import { startServer } from "../../src/server/index.js";
import { CLI } from "../support/helpers.js";
import { mailjetEvent, postEvents } from "../upstreams/mailjet-events.js";

const dir = mkdtempSync(join(tmpdir(), "chainmail-mail-events-"));
const USER = "mailjet";
const PASSWORD = "callback-pa55word";
afterAll(async () => {
  await closeMailStores();
  rmSync(dir, { recursive: true, force: true });
});

describe("events posted as Mailjet posts them", () => {
  const db = join(dir, "events.sqlite");
  let service: { url: string; close(): Promise<void> };
  let callback: string;
  beforeAll(async () => {
    service = await startServer({
      port: 0,
      config: loadConfig({ CHAINMAIL_MAIL_DB: db, CHAINMAIL_EVENTS_USER: USER, CHAINMAIL_EVENTS_PASSWORD: PASSWORD }),
    });
    callback = service.url.replace("http://", `http://${USER}:${PASSWORD}@`) + "/events/mailjet";
  });
  afterAll(async () => service?.close());

  const lifeOf = (MessageID: bigint, email: string, CustomID: string) =>
    ["sent", "open", "click", "unsub"].map((kind, i) =>
      mailjetEvent(kind, { MessageID, email, CustomID, Payload: `p-${CustomID}`, time: 1_700_000_000 + i }),
    );

  it("version 1 and version 2, repeated and out of order, end in the same state", async () => {
    const one = lifeOf(2n ** 60n + 1n, "one@example.com", "v1");
    const two = lifeOf(2n ** 60n + 2n, "two@example.com", "v2");
    const v1 = await postEvents(callback, [...one].reverse(), { version: 1 });
    const v2 = await postEvents(callback, [...two, ...[...two].reverse()], { version: 2, groupSize: 3 });
    for (const d of [...v1, ...v2]) expect(d.attempts).toEqual([200]);
    for (const id of ["v1", "v2"]) {
      const [message] = await mailStatus(id, { db });
      expect(message).toMatchObject({ State: "unsubscribed", EventPayload: `p-${id}` });
      expect(message?.Events.map((e) => e.event)).toEqual(["sent", "open", "click", "unsub"]);
    }
    expect((await mailStatus(String(2n ** 60n + 2n), { db }))[0]?.MessageID).toBe(2n ** 60n + 2n);
  });

  it("acknowledges unknown kinds, and retries a malformed body until it gives up, storing nothing", async () => {
    const future = {
      ...mailjetEvent("sent", { MessageID: 5, email: "f@example.com", time: 1 }),
      event: "delivered_v9",
    };
    const [unknown] = await postEvents(callback, [future], { version: 1 });
    expect(unknown?.attempts).toEqual([200]);
    const broken = { ...mailjetEvent("open", { MessageID: 6, email: "b@example.com", time: 1 }), time: "soon" };
    const [refused] = await postEvents(callback, [broken], { version: 2, retries: 3, retryDelayMs: 5 });
    expect(refused).toMatchObject({ delivered: false, attempts: [400, 400, 400, 400] });
    expect(await mailStatus("6", { db })).toEqual([]);
    const [wrong] = await postEvents(callback.replace(PASSWORD, "guess"), [future], { version: 1, retries: 1 });
    expect(wrong?.attempts).toEqual([403, 403]);
  });
});

/** A free port on loopback. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function startService(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", String(port)], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding("utf8").on("data", (text: string) => {
      if (text.includes("listening on")) resolve(child);
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}`)));
  });
}

describe("a kill -9 between receiving and answering", () => {
  it("loses nothing: Mailjet's retry lands the event", async () => {
    const db = join(dir, "killed.sqlite");
    const env = { CHAINMAIL_MAIL_DB: db, CHAINMAIL_EVENTS_USER: USER, CHAINMAIL_EVENTS_PASSWORD: PASSWORD };
    const port = await freePort();
    let child = await startService(port, env);
    // In front of the service: the first request is passed on, and the service killed as it arrives.
    let killed = false;
    const front: Server = createServer((client) => {
      const upstream = connect(port, "127.0.0.1");
      client.on("data", (chunk) => {
        upstream.write(chunk);
        if (!killed) {
          killed = true;
          child.kill("SIGKILL");
        }
      });
      upstream.on("data", (chunk) => client.write(chunk));
      upstream.on("error", () => client.destroy());
      upstream.on("close", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    const frontPort = (front.address() as { port: number }).port;
    try {
      const events = [mailjetEvent("bounce", { MessageID: 99, email: "gone@example.com", time: 1_700_000_000 })];
      const posting = postEvents(`http://${USER}:${PASSWORD}@127.0.0.1:${frontPort}/events/mailjet`, events, {
        version: 2,
        retries: 100,
        retryDelayMs: 100,
      });
      // Restarted once it died: the retries reach the new process.
      await new Promise((resolve) => child.once("exit", resolve));
      child = await startService(port, env);
      const [delivery] = await posting;
      expect(delivery?.delivered).toBe(true);
      expect(delivery?.attempts[0]).toBe("no answer");
      const [message] = await mailStatus("99", { db });
      expect(message).toMatchObject({ State: "bounced", Bounce: "hard" });
    } finally {
      child.kill("SIGKILL");
      await new Promise((resolve) => front.close(resolve));
    }
  });
});
