/**
 * `maxBodyBytes` of the shared HTTP client (the index's log answers use it): an answer announced or found to be
 * larger is cut off, not retried, and reported with an `AnswerTooLarge` cause; answers within it arrive whole.
 * A real loopback server answers with a content-length or chunked; through undici's Agent and Node's own pool.
 */
import { createServer, type Server } from "node:http";
import { Agent, type Dispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnswerTooLarge, httpRequest, retryReads } from "../../src/core/http.js";
import { dispatcherPool } from "../../src/core/pools/dispatcher.js";
import { NodeHttpPool } from "../../src/core/pools/node-http.js";

let server: Server;
let base = "";
let requests = 0;
const dispatchers = { "undici Agent": new Agent(), NodeHttpPool: new NodeHttpPool({ connections: 4 }) };

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    const size = Number(new URL(req.url!, "http://x").searchParams.get("size"));
    const body = "x".repeat(size);
    if (req.url!.startsWith("/chunked")) {
      // No content-length: the size shows only as the bytes arrive.
      res.writeHead(200, { "transfer-encoding": "chunked" });
      for (let at = 0; at < body.length; at += 16_384) res.write(body.slice(at, at + 16_384));
      res.end();
    } else res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const dispatcher of Object.values(dispatchers)) await dispatcher.close();
  await new Promise((resolve) => server.close(resolve));
});

const get = (dispatcher: Pick<Dispatcher, "dispatch">, path: string, maxBodyBytes: number) =>
  httpRequest({
    upstream: "test",
    method: "GET",
    url: `${base}${path}`,
    timeoutMs: 5000,
    retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5, budgetMs: 1000 },
    shouldRetry: retryReads,
    pool: dispatcherPool(dispatcher),
    maxBodyBytes,
  });

describe.each(Object.entries(dispatchers))("maxBodyBytes through %s", (_, dispatcher) => {
  for (const style of ["/length", "/chunked"]) {
    it(`passes an answer within the limit whole (${style})`, async () => {
      const result = await get(dispatcher, `${style}?size=100000`, 100_000);
      expect(result.response?.body.length).toBe(100_000);
    });

    it(`cuts off a larger answer once, without retrying (${style})`, async () => {
      const before = requests;
      const result = await get(dispatcher, `${style}?size=300000`, 100_000);
      expect(result.response).toBeUndefined();
      expect(result.attempts).toBe(1);
      expect(requests - before).toBe(1);
      const cause = result.error?.cause;
      expect(cause).toBeInstanceOf(AnswerTooLarge);
      expect((cause as AnswerTooLarge).limit).toBe(100_000);
      // The announced length is known only when the server sent one.
      expect((cause as AnswerTooLarge).bytes).toBe(style === "/length" ? 300_000 : undefined);
      expect(result.error?.message).toMatch(/more than 100000 bytes/);
    });
  }
});
