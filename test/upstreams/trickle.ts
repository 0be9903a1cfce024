/** An upstream that answers at once and then far too slowly: the status and headers now, the body a byte at a time. */
import type { ServerResponse } from "node:http";

/**
 * Sends `status` and `headers` at once, then one byte of `body` every `everyMs` until it is all sent or the client
 * goes away (a client with a deadline gives up first when the body is long enough).
 */
export function trickle(
  res: ServerResponse,
  status: number,
  body: string,
  everyMs: number,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.flushHeaders();
  const bytes = Buffer.from(body);
  let sent = 0;
  const timer = setInterval(() => {
    if (sent >= bytes.length) {
      clearInterval(timer);
      res.end();
      return;
    }
    res.write(bytes.subarray(sent, sent + 1));
    sent++;
  }, everyMs);
  res.on("close", () => clearInterval(timer));
}
