/**
 * The job of the `email-send` node written by hand with Mailjet's own SDK (node-mailjet): a batch split into calls
 * of 50 messages, 4 workers each taking the next call, results put back in input order.
 * Usage: node node-mailjet-send.mjs <Mailjet base URL> <messages> <api key> <secret key>
 */
import Mailjet from "node-mailjet";
import { benchMessages, report } from "./email-messages.mjs";

const [base, count, key, secret] = process.argv.slice(2);
const messages = benchMessages(Number(count));
const url = new URL(base);
// The SDK only speaks https to a host name; the local server is plain http on loopback.
Mailjet.Request.protocol = `${url.protocol}//`;
const mailjet = Mailjet.apiConnect(key, secret, { config: { host: url.host, version: "v3.1" } });

const started = performance.now();
const results = new Array(messages.length);
let next = 0;
let calls = 0;
async function worker() {
  while (next < messages.length) {
    const first = next;
    next += 50;
    const part = messages.slice(first, first + 50);
    const answer = await mailjet.post("send", { version: "v3.1" }).request({ Messages: part });
    calls++;
    answer.body.Messages.forEach((result, i) => {
      results[first + i] = result;
    });
  }
}
await Promise.all([worker(), worker(), worker(), worker()]);
report(started, results, calls);
