/**
 * src/server/logging.ts on its own, in a real Fastify server over real sockets: what the structured logs hold and
 * never hold. One access line per request (no `incoming request` line) with the query string redacted whole; no
 * secret, wherever a caller's object ends up (Authorization, X-Api-Key, params' keys and passwords, a token in the
 * query), in any line, the `request errored` one included.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccessLog, loggerOptions } from "../../src/server/logging.js";
import { call, logCapture } from "../support/server-helpers.js";

const SECRETS = {
  bearer: "bearer-secret-7f3a9c",
  apiKey: "x-api-key-secret-41d2",
  password: "params-password-9e8b",
  user: "params-user-id-5c6d",
  paramsKey: "params-api-key-2a1f",
  query: "query-token-3b4e",
};

describe("loggerOptions", () => {
  it("no logger unless asked; `true` is JSON at info; a level and a destination are kept", () => {
    expect(loggerOptions(undefined)).toBe(false);
    expect(loggerOptions(false)).toBe(false);
    const on = loggerOptions(true);
    expect(on).toMatchObject({ level: "info", redact: { censor: "[REDACTED]" } });
    expect(on).not.toHaveProperty("stream");
    const stream = { write: () => undefined };
    expect(loggerOptions({ level: "warn", stream })).toMatchObject({ level: "warn", stream });
  });
});

describe("the service's logs", () => {
  const log = logCapture();
  const controller = new AccessLog();
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    app = Fastify({ logger: loggerOptions({ level: "info", stream: log.stream }), logController: controller });
    app.get("/plain", async () => ({ ok: true }));
    // What a route might log of a caller's input: params at the top level, and one level down.
    app.post("/nodes/:id", async (request) => {
      request.log.info(
        { params: { api_key: SECRETS.paramsKey, password: SECRETS.password, "user id": SECRETS.user } },
        "input",
      );
      request.log.warn(
        { input: { params: { api_key: SECRETS.paramsKey, password: SECRETS.password, "user id": SECRETS.user } } },
        "nested input",
      );
      return { ok: true };
    });
    // The `request errored` line, as Fastify writes it when an answer fails on its way out.
    app.get("/errored", async (request, reply) => {
      controller.requestCompleted(new Error("the socket broke"), request, reply);
      return { ok: true };
    });
    url = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => app.close());

  const headers = { authorization: `Bearer ${SECRETS.bearer}`, "x-api-key": SECRETS.apiKey };
  const linesOf = (msg: string) => log.parsed().filter((line) => line.msg === msg);
  const expectNoSecret = () => {
    const all = log.lines.join("\n");
    for (const secret of Object.values(SECRETS)) expect(all).not.toContain(secret);
  };

  it("writes one access line per request, with the query string redacted whole and no headers", async () => {
    const before = log.lines.length;
    const answer = await call(
      `${url}/plain?access_token=${SECRETS.query}&${SECRETS.query}=1`,
      "GET",
      undefined,
      headers,
    );
    expect(answer.status).toBe(200);
    const lines = log.parsed().slice(before);
    expect(lines.map((line) => line.msg)).toEqual(["request completed"]);
    const line = lines[0] as { req: Record<string, unknown>; res: { statusCode: number }; reqId: string };
    expect(line.req).toEqual({
      method: "GET",
      url: "/plain?[REDACTED]",
      host: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      remoteAddress: "127.0.0.1",
      remotePort: expect.any(Number),
    });
    expect(line.res.statusCode).toBe(200);
    expect(typeof line.reqId).toBe("string");
    expect(line).toHaveProperty("responseTime");
    expectNoSecret();
  });

  it("a path without a query is logged as it is", async () => {
    await call(`${url}/plain`, "GET");
    expect((linesOf("request completed").at(-1) as { req: { url: string } }).req.url).toBe("/plain");
  });

  it("redacts params' API key, password and user id, at the top and one level down", async () => {
    await call(`${url}/nodes/email-send`, "POST", { params: { password: SECRETS.password } }, headers);
    const [top] = linesOf("input") as { params: Record<string, unknown> }[];
    expect(top!.params).toEqual({ api_key: "[REDACTED]", password: "[REDACTED]", "user id": "[REDACTED]" });
    const [nested] = linesOf("nested input") as { input: { params: Record<string, unknown> } }[];
    expect(nested!.input.params).toEqual({ api_key: "[REDACTED]", password: "[REDACTED]", "user id": "[REDACTED]" });
    expectNoSecret();
  });

  it("the `request errored` line carries the error and the request, redacted like the rest", async () => {
    await call(`${url}/errored?key=${SECRETS.query}`, "GET", undefined, headers);
    const [line] = linesOf("request errored") as {
      level: number;
      req: { url: string };
      err: { message: string };
    }[];
    expect(line!.level).toBe(50);
    expect(line!.err.message).toBe("the socket broke");
    expect(line!.req.url).toBe("/errored?[REDACTED]");
    expectNoSecret();
  });

  it("never writes Fastify's separate `incoming request` line", () => {
    expect(linesOf("incoming request")).toEqual([]);
  });
});
