/**
 * The service under hostile or careless clients, over real sockets: slow and idle connections are cut after their
 * own timeouts while valid requests are still answered, refused callers are disconnected at once, the connection
 * limit holds, query strings never reach the logs, and hostile bodies get 400, never a stuck pool or a 500.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { loadServerSettings } from "../../src/server/settings.js";
import { testConfig } from "../support/helpers.js";
import { call, logCapture } from "../support/server-helpers.js";
import { API_KEY, type MailjetServer, SECRET_KEY, startMailjet } from "../upstreams/mailjet.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_721, standardDataset } from "../upstreams/nftport-data.js";

const TOKEN = "test-token-0123456789abcdef";
const BY_TOKEN = "/nodes/nft-transactions-by-token";
const query = { contract_address: CONTRACT_721, token_id: "1" };
const params = { api_key: VALID_KEY };

let nftport: NftportServer;
let mailjet: MailjetServer;
const started: RunningServer[] = [];

async function serve(env: Record<string, string> = {}, extra: Parameters<typeof startServer>[0] = {}) {
  const server = await startServer({
    port: 0,
    config: testConfig({ NFTPORT_BASE_URL: nftport.url, MAILJET_BASE_URL: mailjet.url, ...env }),
    ...extra,
  });
  started.push(server);
  return server;
}

beforeAll(async () => {
  [nftport, mailjet] = await Promise.all([startNftport(standardDataset(20)), startMailjet()]);
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.close()));
  await Promise.all([nftport.close(), mailjet.close()]);
});

/** A raw client socket that records what it received and resolves `closed` when the other side closes it. */
interface RawClient {
  socket: Socket;
  received: () => string;
  closed: Promise<void>;
}

function rawClient(url: string): Promise<RawClient> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", () => {}); // a write after the server closed: expected here
    const closed = new Promise<void>((done) => socket.on("close", () => done()));
    socket.once("connect", () => resolve({ socket, received: () => text, closed }));
    socket.once("error", reject);
  });
}

/** Writes `pieces` one every `everyMs` until the socket closes. */
function trickle(client: RawClient, pieces: () => string, everyMs: number): void {
  const timer = setInterval(() => {
    if (client.socket.destroyed) clearInterval(timer);
    else client.socket.write(pieces());
  }, everyMs);
  void client.closed.then(() => clearInterval(timer));
}

const post = (path: string, length: number, extra = "") =>
  `POST ${path} HTTP/1.1\r\nHost: chainmail\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe("slow and idle clients", () => {
  it("1,000 slow sockets: valid requests are still answered, and the server closes each after its own timeout", async () => {
    const server = await serve({
      CHAINMAIL_HEADERS_TIMEOUT_MS: "800",
      CHAINMAIL_BODY_TIMEOUT_MS: "1200",
    });
    const clients: RawClient[] = [];
    for (let i = 0; i < 1000; i++) {
      const client = await rawClient(server.url);
      const kind = i % 3;
      if (kind === 1) {
        // Slow headers: a header line now and then, never the blank line that ends them.
        client.socket.write(`POST ${BY_TOKEN} HTTP/1.1\r\n`);
        trickle(client, () => "X-Slow: 1\r\n", 200);
      } else if (kind === 2) {
        // Slow body: headers at once, then a byte now and then of a 1 MB body.
        client.socket.write(post(BY_TOKEN, 1_000_000));
        trickle(client, () => " ", 200);
      } // kind 0: connected and silent.
      clients.push(client);
    }

    // Every slow socket is open; valid requests, one after another and at once, are answered.
    const one = await call(`${server.url}${BY_TOKEN}`, "POST", { query, params });
    expect(one.status).toBe(200);
    const many = await Promise.all(
      Array.from({ length: 20 }, () => call(`${server.url}${BY_TOKEN}`, "POST", { query: { page_size: 0 } })),
    );
    expect(many.map((r) => r.status)).toEqual(Array(20).fill(400));
    expect((await call(`${server.url}/healthz`, "GET")).status).toBe(200);

    // Then the server closes every slow socket itself (the test would time out otherwise), answering 408.
    await Promise.all(clients.map((c) => c.closed));
    const answers = clients.map((c) => c.received());
    expect(answers.every((text) => text.startsWith("HTTP/1.1 408 Request Timeout\r\n"))).toBe(true);
    expect(answers[2]).toContain('"code":"receive_timeout"');
    expect(answers[2]).toContain("CHAINMAIL_BODY_TIMEOUT_MS");
  });

  it("a caller refused before its body is read (401, unknown node) is disconnected at once, not when its body ends", async () => {
    // A body timeout far beyond the test's: only an immediate close lets this test finish.
    const server = await serve({ CHAINMAIL_BODY_TIMEOUT_MS: "600000" }, { tokens: [TOKEN] });
    for (const [path, status] of [
      [BY_TOKEN, 401],
      ["/nodes/no-such-node", 404],
    ] as const) {
      const client = await rawClient(server.url);
      client.socket.write(post(path, 1_000_000, path === BY_TOKEN ? "" : `Authorization: Bearer ${TOKEN}\r\n`));
      trickle(client, () => "x".repeat(100), 50);
      await client.closed;
      expect(client.received()).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(client.received().toLowerCase()).toContain("connection: close");
    }
  });

  it("a body larger than the limit is answered 413 and the connection closed, the rest never read", async () => {
    const server = await serve({ CHAINMAIL_BODY_LIMIT_BYTES: "1000", CHAINMAIL_BODY_TIMEOUT_MS: "600000" });
    const client = await rawClient(server.url);
    client.socket.write(post(BY_TOKEN, 1_000_000));
    trickle(client, () => "x".repeat(500), 20);
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1.1 413 /);
  });

  it("at most CHAINMAIL_MAX_CONNECTIONS connections: one more is closed at once; once they go, requests are answered", async () => {
    const server = await serve({ CHAINMAIL_MAX_CONNECTIONS: "5", CHAINMAIL_HEADERS_TIMEOUT_MS: "600000" });
    const held = await Promise.all(Array.from({ length: 5 }, () => rawClient(server.url)));
    // Accepted sockets are counted once the server has seen them; wait until it has.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const extra = await rawClient(server.url);
    extra.socket.write(`GET /healthz HTTP/1.1\r\nHost: chainmail\r\n\r\n`);
    await extra.closed;
    expect(extra.received()).toBe("");
    for (const client of held) client.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await call(`${server.url}/healthz`, "GET")).status).toBe(200);
  });

  it("the timeouts and the connection limit are settings, refused when not positive integers", () => {
    const settings = loadServerSettings(testConfig({}));
    expect(settings).toMatchObject({ headersTimeoutMs: 5000, bodyTimeoutMs: 10000, maxConnections: 4096 });
    for (const name of ["CHAINMAIL_HEADERS_TIMEOUT_MS", "CHAINMAIL_BODY_TIMEOUT_MS", "CHAINMAIL_MAX_CONNECTIONS"]) {
      expect(() => loadServerSettings(testConfig({ [name]: "0" }))).toThrow(name);
    }
  });
});

describe("logs", () => {
  it("never hold a query string: tokens and keys sent in the URL are redacted", async () => {
    const logs = logCapture();
    const server = await serve({}, { logger: { stream: logs.stream } });
    const secret = "sk-live-0123456789abcdef";
    await call(`${server.url}/healthz?access_token=${secret}`, "GET");
    await call(`${server.url}${BY_TOKEN}?api_key=${secret}&${secret}`, "POST", { query, params });
    await call(`${server.url}/no/such/route?token=${secret}`, "GET");
    expect(logs.lines.join("\n")).not.toContain(secret);
    const urls = logs.parsed().flatMap((line) => (line.req as { url?: string } | undefined)?.url ?? []);
    expect(urls).toEqual(["/healthz?[REDACTED]", `${BY_TOKEN}?[REDACTED]`, "/no/such/route?[REDACTED]"]);
  });
});

describe("hostile bodies", () => {
  it("100 api keys no header can carry, then a valid call: 400 each, and the valid one is answered", async () => {
    const server = await serve({ CHAINMAIL_MAX_RETRIES: "0", CHAINMAIL_REQUEST_TIMEOUT_MS: "5000" });
    const statuses = new Set<number>();
    for (let i = 0; i < 100; i++) {
      const res = await call(`${server.url}${BY_TOKEN}`, "POST", { query, params: { api_key: `key\r\n${i}` } });
      statuses.add(res.status);
    }
    const good = await call(`${server.url}${BY_TOKEN}`, "POST", { query, params });
    expect(good.status).toBe(200);
    expect([...statuses]).toEqual([400]);
  });

  it("a 10 KB body nested 5,000 deep is 400 invalid_input, not 500", async () => {
    const server = await serve();
    const deep = `{"query":{"contract_address":"${CONTRACT_721}","token_id":"1","continuation":${"[".repeat(5000)}${"]".repeat(5000)}},"params":{"api_key":"${VALID_KEY}"}}`;
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", deep);
    expect(res.status).toBe(400);
    expect(res.body.error.details.code).toBe("invalid_input");
    expect(res.body.error.error).toContain("nested too deeply");
    const variables = `{"request":{"Messages":[{"From":{"Email":"a@chainmail.test"},"To":[{"Email":"b@example.org"}],"TextPart":"x","Variables":{"v":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}}]},"params":{"user id":"${API_KEY}","password":"${SECRET_KEY}"}}`;
    const email = await call(`${server.url}/nodes/email-send`, "POST", variables);
    expect(email.status).toBe(400);
    expect(email.body.error.details.code).toBe("invalid_input");
  });

  it("a top-level constructor or __proto__ key is an unknown port: 400, nothing sent", async () => {
    const server = await serve();
    const before = nftport.requests.length;
    for (const key of ["constructor", "__proto__", "toString"]) {
      const body = `{"query":${JSON.stringify(query)},"params":${JSON.stringify(params)},"${key}":{}}`;
      const res = await call(`${server.url}${BY_TOKEN}`, "POST", body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.violations.map((v: { field: string }) => v.field)).toEqual([key]);
    }
    expect(nftport.requests.length).toBe(before);
  });

  it("a string holding a lone surrogate (\\ud800 in the JSON text) is 400 invalid_input, not 500", async () => {
    const server = await serve();
    const body = `{"query":{"contract_address":"${CONTRACT_721}","token_id":"1","continuation":"a\\ud800"},"params":{"api_key":"${VALID_KEY}"}}`;
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", body);
    expect(res.status).toBe(400);
    expect(res.body.error.details.violations[0].field).toBe("query.continuation");
  });
});

describe("the operator's Mailjet key", () => {
  it("never reaches a caller, even when Mailjet echoes it", async () => {
    const server = await serve({ MAILJET_API_KEY: API_KEY, MAILJET_SECRET_KEY: SECRET_KEY }, { tokens: [TOKEN] });
    mailjet.fault({
      status: 401,
      body: JSON.stringify({ ErrorIdentifier: "x", StatusCode: 401, ErrorMessage: `API key ${API_KEY} is unknown` }),
      headers: { "content-type": "application/json", "x-echo": API_KEY },
    });
    const message = { From: { Email: "a@chainmail.test" }, To: [{ Email: "b@example.org" }], TextPart: "x" };
    const res = await call(
      `${server.url}/nodes/email-send`,
      "POST",
      { request: { Messages: [message] } },
      {
        authorization: `Bearer ${TOKEN}`,
      },
    );
    expect(res.status).toBe(502);
    expect(res.body.error.details.code).toBe("upstream_auth");
    expect(res.text).not.toContain(API_KEY);
    expect(res.text).not.toContain(SECRET_KEY);
    expect(res.text).toContain("API key [REDACTED] is unknown");
  });

  it("CHAINMAIL_TOKENS that no Authorization header can carry are refused at start", () => {
    expect(() => loadServerSettings(testConfig({ CHAINMAIL_TOKENS: "a token with spaces in it" }))).toThrow(
      "token 1 holds a space",
    );
  });
});
