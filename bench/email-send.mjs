/**
 * chainmail's side of bench/email.bench.ts, in a process of its own so that its peak RSS can be measured: one
 * `runNode(emailSend, …)` over the whole batch, as a library user would write it (built dist/, configuration
 * from the environment: MAILJET_BASE_URL, MAILJET_CONCURRENCY).
 * Usage: node email-send.mjs <messages> <api key> <secret key>
 */
import { emailSend, runNode } from "../dist/index.js";
import { benchMessages, report } from "./peers/email-messages.mjs";

const [count, key, secret] = process.argv.slice(2);
const messages = benchMessages(Number(count));

const started = performance.now();
const out = await runNode(emailSend, { params: { "user id": key, password: secret }, request: { Messages: messages } });
if (out.error) {
  process.stderr.write(`${JSON.stringify(out.error)}\n`);
  process.exit(1);
}
report(started, out["messages sent"].Messages, undefined);
