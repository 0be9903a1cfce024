/**
 * The floor of the email-send comparison: the same calls with nothing but Node's own HTTP client — 50 messages a
 * call, 4 workers on one keep-alive agent, `JSON.stringify` out and plain `JSON.parse` back (which rounds the
 * MessageIDs beyond 2^53), no validation, no retries, no scrubbing. What the machine allows at that moment.
 * Usage: node bare-http-send.mjs <Mailjet base URL> <messages> <api key> <secret key>
 */
import { Agent, request } from "node:http";
import { benchMessages, report } from "./email-messages.mjs";

const [base, count, key, secret] = process.argv.slice(2);
const messages = benchMessages(Number(count));
const url = new URL("/v3.1/send", base);
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
const headers = {
  authorization: `Basic ${Buffer.from(`${key}:${secret}`).toString("base64")}`,
  "content-type": "application/json",
};

const post = (body) =>
  new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers, agent }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });

const started = performance.now();
const results = new Array(messages.length);
let next = 0;
let calls = 0;
async function worker() {
  while (next < messages.length) {
    const first = next;
    next += 50;
    const answer = await post(JSON.stringify({ Messages: messages.slice(first, first + 50) }));
    calls++;
    answer.Messages.forEach((result, i) => {
      results[first + i] = result;
    });
  }
}
await Promise.all([worker(), worker(), worker(), worker()]);
report(started, results, calls);
agent.destroy();
