/**
 * src/server/replies.ts on its own, in a real Fastify server over real sockets: every error answered as
 * `{ error: payload }` with the status of its code; Fastify's own failures (a body too large, its 4xx) and unknown
 * errors (500 `internal`, no detail leaked) in the same shape; a missing route naming the routes; and the
 * connection-level failures Fastify never sees as requests, answered on the raw socket, which is then closed.
 */
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { JsonTooDeepError, MAX_JSON_DEPTH, parseJson } from "../../src/core/json.js";
import { clientError, errorHandler, malformedBody, notFound, sendJson } from "../../src/server/replies.js";
import type { ServerSettings } from "../../src/server/settings.js";
import { call } from "../support/server-helpers.js";

const settings = { bodyLimitBytes: 64, headersTimeoutMs: 5000, bodyTimeoutMs: 15000 } as ServerSettings;

describe("malformedBody", () => {
  it("a body that is not JSON: invalid_input on (body), with the parser's reason", () => {
    let parseError: unknown;
    try {
      parseJson("{oops");
    } catch (err) {
      parseError = err;
    }
    const err = malformedBody(parseError);
    expect(err.code).toBe("invalid_input");
    expect(err.violations).toHaveLength(1);
    expect(err.violations[0]).toMatchObject({ field: "(body)", rule: "a JSON object" });
    expect(err.violations[0]!.message).toMatch(/^The request body is not valid JSON: .+\. Send the input object/);
  });

  it("a body nested too deeply: its own rule naming the limit", () => {
    const deep = "[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1);
    let parseError: unknown;
    try {
      parseJson(deep);
    } catch (err) {
      parseError = err;
    }
    expect(parseError).toBeInstanceOf(JsonTooDeepError);
    const err = malformedBody(parseError);
    expect(err.violations[0]!.rule).toBe(`at most ${MAX_JSON_DEPTH} levels`);
    expect(err.violations[0]!.message).toContain("nested too deeply");
    expect(malformedBody("text thrown").violations[0]!.message).toContain("not valid JSON: text thrown.");
  });
});

describe("errorHandler, notFound and sendJson in a real server", () => {
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    app = Fastify({ bodyLimit: settings.bodyLimitBytes });
    app.setErrorHandler(errorHandler(settings));
    app.setNotFoundHandler(notFound);
    app.get("/timeout", async () => {
      throw new ChainmailError("UPSTREAM_TIMEOUT", "NFTPort did not answer in time.", {
        hint: "Try again.",
        details: { upstream: "NFTPort" },
      });
    });
    app.get("/crash", async () => {
      throw new Error("secret internals: password=hunter2");
    });
    app.get("/fastify-4xx", async () => {
      throw Object.assign(new Error("Unsupported Media Type: text/csv"), { statusCode: 415 });
    });
    app.post("/echo", async (request) => request.body);
    app.get("/big", async (_request, reply) => sendJson(reply, 201, { id: 2n ** 64n }));
    url = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => app.close());

  it("a chainmail error: its code's status and its payload", async () => {
    const answer = await call(`${url}/timeout`, "GET");
    expect(answer.status).toBe(504);
    expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(answer.body).toEqual({
      error: {
        error: "NFTPort did not answer in time. Try again.",
        details: { code: "upstream_timeout", upstream: "NFTPort" },
      },
    });
  });

  it("anything else: 500 internal, without the error's own words", async () => {
    const answer = await call(`${url}/crash`, "GET");
    expect(answer.status).toBe(500);
    expect(answer.body.error.details.code).toBe("internal");
    expect(answer.text).not.toContain("hunter2");
  });

  it("Fastify's own 4xx keeps its status, as invalid_input", async () => {
    const answer = await call(`${url}/fastify-4xx`, "GET");
    expect(answer.status).toBe(415);
    expect(answer.body.error).toEqual({
      error: "The request is invalid: Unsupported Media Type: text/csv.",
      details: { code: "invalid_input", violations: [] },
    });
  });

  it("a body above the limit: 413 request_too_large, naming the limit", async () => {
    const answer = await call(`${url}/echo`, "POST", { data: "x".repeat(200) });
    expect(answer.status).toBe(413);
    expect(answer.body.error.details).toEqual({ code: "request_too_large", limit_bytes: 64 });
    expect(answer.body.error.error).toContain("larger than 64 bytes");
  });

  it("no route: 404 not_found naming the routes there are, the query string left out", async () => {
    const answer = await call(`${url}/nowhere?token=abc123`, "GET");
    expect(answer.status).toBe(404);
    expect(answer.body.error.details.code).toBe("not_found");
    expect(answer.body.error.error).toMatch(/^No route GET \/nowhere\. Routes: POST \/nodes\/<node-id>, /);
    expect(answer.text).not.toContain("abc123");
  });

  it("sendJson writes exact JSON (integers beyond 2^53 as digits) with the status given", async () => {
    const answer = await call(`${url}/big`, "GET");
    expect(answer.status).toBe(201);
    expect(answer.text).toBe(`{"id":${2n ** 64n}}`);
  });
});

describe("clientError on a real socket", () => {
  let server: Server;
  let port: number;
  /** The server's side of each connection, in order. */
  const accepted: Socket[] = [];

  beforeAll(async () => {
    server = createServer((socket) => void accepted.push(socket));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of accepted) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Connects, lets `clientError` answer on the server's side, and reads everything the client receives. */
  async function answerTo(err: Error & { code?: string }): Promise<{ text: string; closedByIt: boolean }> {
    const client = connect(port, "127.0.0.1");
    await once(client, "connect");
    while (accepted.length === 0 || accepted.at(-1)!.remotePort !== client.localPort)
      await new Promise((r) => setImmediate(r));
    const serverSide = accepted.at(-1)!;
    let text = "";
    client.setEncoding("utf8").on("data", (d: string) => {
      text += d;
    });
    const closed = once(client, "close");
    clientError(err, serverSide, settings);
    const closedByIt = serverSide.destroyed;
    // Left open (a reset connection is Node's to close): closed here so the client's wait ends.
    if (!closedByIt) serverSide.destroy();
    await closed;
    return { text, closedByIt };
  }
  const parts = (text: string) => {
    const [head, body] = text.split("\r\n\r\n");
    return { head: head!.split("\r\n"), body: JSON.parse(body!) };
  };

  it("bytes that are not HTTP: 400 invalid_input on (request), then the socket is closed", async () => {
    const { text, closedByIt } = await answerTo(
      Object.assign(new Error("Parse Error"), { code: "HPE_INVALID_METHOD" }),
    );
    const { head, body } = parts(text);
    expect(head[0]).toBe("HTTP/1.1 400 Bad Request");
    expect(head).toContain("Connection: close");
    expect(head).toContain("Content-Type: application/json; charset=utf-8");
    expect(head).toContain(`Content-Length: ${Buffer.byteLength(text.split("\r\n\r\n")[1]!)}`);
    expect(body.error.details.code).toBe("invalid_input");
    expect(body.error.details.violations[0].field).toBe("(request)");
    expect(closedByIt).toBe(true);
  });

  it("headers too large: 431, saying so", async () => {
    const { text } = await answerTo(Object.assign(new Error("Header overflow"), { code: "HPE_HEADER_OVERFLOW" }));
    const { head, body } = parts(text);
    expect(head[0]).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(body.error.error).toContain("(its headers are too large)");
  });

  it("a request that did not arrive in time: 408 receive_timeout with both timeouts", async () => {
    const { text } = await answerTo(Object.assign(new Error("timeout"), { code: "ERR_HTTP_REQUEST_TIMEOUT" }));
    const { head, body } = parts(text);
    expect(head[0]).toBe("HTTP/1.1 408 Request Timeout");
    expect(body.error.details).toEqual({ code: "receive_timeout", headers_timeout_ms: 5000, body_timeout_ms: 15000 });
  });

  it("a connection reset by the client: nothing is written", async () => {
    const { text, closedByIt } = await answerTo(Object.assign(new Error("reset"), { code: "ECONNRESET" }));
    expect(text).toBe("");
    expect(closedByIt).toBe(false);
  });
});
