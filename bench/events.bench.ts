/**
 * `npm run bench -- events`: Mailjet's event callbacks into `chainmail serve` (in process, an SQLite mail store in
 * a temporary folder), the way Mailjet version 2 posts them: arrays of about a second's events, several requests
 * in flight. Goal: 10,000 events/s accepted, p99 of a request under 50 ms.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { loadConfig } from "../src/core/config.js";
import { startServer } from "../src/server/index.js";
import { loadAverage } from "./measure.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const PER_REQUEST = Number(process.env.BENCH_EVENTS_PER_REQUEST ?? 100);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 4);
const KINDS = ["sent", "open", "click", "open", "sent", "bounce", "unsub", "spam"];

function batch(first: number): string {
  const events = Array.from({ length: PER_REQUEST }, (_, i) => {
    const n = first + i;
    const kind = KINDS[n % KINDS.length]!;
    return {
      event: kind,
      time: 1_700_000_000 + n,
      MessageID: 1_000_000_000_000 + Math.floor(n / 4),
      Message_GUID: `guid-${Math.floor(n / 4)}`,
      email: `r${Math.floor(n / 4) % 5000}@example.com`,
      CustomID: `c-${Math.floor(n / 4)}`,
      Payload: "rule=sales",
      ...(kind === "bounce" ? { hard_bounce: n % 3 === 0 } : {}),
    };
  });
  return JSON.stringify(events);
}

export default async function eventsBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "chainmail-bench-events-"));
  const server = await startServer({
    port: 0,
    config: loadConfig({
      CHAINMAIL_MAIL_DB: join(dir, "mail.sqlite"),
      CHAINMAIL_EVENTS_USER: "mj",
      CHAINMAIL_EVENTS_PASSWORD: "pw",
    }),
  });
  const auth = `Basic ${Buffer.from("mj:pw").toString("base64")}`;
  const bodies = Array.from({ length: EVENTS / PER_REQUEST }, (_, i) => batch(i * PER_REQUEST));
  const latencies: number[] = [];
  try {
    // Warm-up: the store's first open and migration are not what is measured.
    await request(`${server.url}/events/mailjet`, {
      method: "POST",
      headers: { authorization: auth },
      body: batch(10_000_000),
    }).then((r) => r.body.text());
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++]!;
          const t = performance.now();
          const res = await request(`${server.url}/events/mailjet`, {
            method: "POST",
            headers: { authorization: auth, "content-type": "application/json" },
            body,
          });
          await res.body.text();
          if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
    console.log(
      `${EVENTS} events in ${bodies.length} requests of ${PER_REQUEST}, ${IN_FLIGHT} in flight, SQLite: ` +
        `${Math.round(EVENTS / seconds)} events/s; request p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${p(1)} ms ` +
        `(goal: 10,000 events/s, p99 < 50 ms); load ${await loadAverage()}`,
    );
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
