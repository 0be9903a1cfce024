/**
 * email-send: 10,000 one-recipient messages (200 calls of 50) through the node against the local Mailjet server,
 * which answers every call after a fixed delay. Ideal wall time = calls × one round trip / concurrency, where one
 * round trip is the median of single 50-message calls (server delay + loopback + both sides' JSON work). Peak memory is sampled every 5 ms (the server shares the
 * process, so its memory is included).
 */
import { loadConfig } from "../src/core/config.js";
import { runNode } from "../src/core/node.js";
import { emailSend } from "../src/nodes/index.js";
import { API_KEY, SECRET_KEY, startMailjet } from "../test/upstreams/mailjet.js";
import { measure } from "./measure.js";

const MESSAGES = 10_000;
const LATENCY_MS = 20;
const params = { "user id": API_KEY, password: SECRET_KEY };

const messages = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({
    From: { Email: "news@chainmail.test", Name: "Chainmail" },
    To: [{ Email: `${tag}-${i}@example.org`, Name: `Reader ${i}` }],
    Subject: "Your weekly digest",
    TextPart: `Hello reader ${i}, here is your digest.`,
    CustomID: `${tag}-${i}`,
  }));

export default async function emailBench(): Promise<void> {
  const server = await startMailjet({ latencyMs: LATENCY_MS });
  try {
    for (const concurrency of [1, 4, 8]) {
      const config = loadConfig({ MAILJET_BASE_URL: server.url, MAILJET_CONCURRENCY: String(concurrency) });
      // One round trip: the median of 15 single 50-message calls, after a warm-up that opens the connections.
      await runNode(emailSend, { params, request: { Messages: messages(50, `warm${concurrency}`) } }, { config });
      const trips: number[] = [];
      for (let i = 0; i < 15; i++) {
        const one = messages(50, `rtt${concurrency}-${i}`);
        const t = performance.now();
        await runNode(emailSend, { params, request: { Messages: one } }, { config });
        trips.push(performance.now() - t);
      }
      const rtt = trips.sort((a, b) => a - b)[7]!;

      const batch = messages(MESSAGES, `c${concurrency}`);
      const before = server.requests.length;
      const {
        value: out,
        wall,
        rss,
        heap,
      } = await measure(() => runNode(emailSend, { params, request: { Messages: batch } }, { config }));
      const calls = server.requests.length - before;
      const ok = out["messages sent"]?.Messages.filter((m) => m.Status === "success").length ?? 0;
      if (out.error || ok !== MESSAGES) throw new Error(`bench run failed: ${out.error?.error ?? `${ok} sent`}`);
      const ideal = (calls * rtt) / concurrency;
      console.log(
        `concurrency ${concurrency}: ${MESSAGES} messages in ${calls} calls, wall ${wall.toFixed(0)} ms, ` +
          `ideal ${ideal.toFixed(0)} ms (${calls} × ${rtt.toFixed(1)} ms / ${concurrency}), ratio ${(wall / ideal).toFixed(2)}, ` +
          `${((MESSAGES / wall) * 1000).toFixed(0)} msg/s, peak RSS ${rss}, peak heap ${heap}`,
      );
    }
  } finally {
    await server.close();
  }
}
