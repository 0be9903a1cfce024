/** `chainmail run email-send` through the built command line (`npm test` builds first). */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseJson, stringifyJson } from "../../src/core/json.js";
import { API_KEY, FIRST_MESSAGE_ID, type MailjetServer, SECRET_KEY, startMailjet } from "../upstreams/mailjet.js";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
let mj: MailjetServer;
let dir: string;
let seq = 0;
const addr = () => `cli-${++seq}@example.org`;
const message = (to: string, extra: Record<string, unknown> = {}) => ({
  From: { Email: "news@chainmail.test" },
  To: [{ Email: to }],
  Subject: "Hi",
  TextPart: "Hello",
  ...extra,
});

/** Runs the CLI asynchronously (the local server lives in this process) with `input` in a file. */
async function cli(input: unknown, env: Record<string, string> = {}) {
  const file = join(dir, `input-${++seq}.json`);
  await writeFile(file, stringifyJson(input));
  return new Promise<{ code: number; stdout: string; stderr: string; out: Record<string, any> }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, "run", "email-send", "--input", `@${file}`],
      {
        env: {
          PATH: process.env.PATH,
          MAILJET_BASE_URL: mj.url,
          CHAINMAIL_RETRY_BASE_MS: "20",
          CHAINMAIL_TIMEOUT_MS: "5000",
          ...env,
        },
      },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        let out: Record<string, any> = {};
        try {
          out = parseJson(stdout) as Record<string, any>;
        } catch {}
        expect(stdout + stderr).not.toContain(SECRET_KEY);
        resolve({ code, stdout, stderr, out });
      },
    );
  });
}

const params = { "user id": API_KEY, password: SECRET_KEY };

beforeAll(async () => {
  mj = await startMailjet();
  dir = await mkdtemp(join(tmpdir(), "chainmail-cli-"));
});
afterEach(() => expect(mj.duplicates()).toEqual([]));
afterAll(() => mj.close());

describe("chainmail run email-send", () => {
  it("prints a mixed batch on messages sent with exact MessageIDs, exit 0", async () => {
    const [a, b] = [addr(), addr()];
    const { code, stdout, out } = await cli({
      params,
      request: { Messages: [message(a), message(b, { From: { Email: "x@unverified.org" } })] },
    });
    expect(code).toBe(0);
    expect(out.error).toBeUndefined();
    expect(out["messages sent"].Messages.map((m: { Status: string }) => m.Status)).toEqual(["success", "error"]);
    expect(out.response.status).toBe(403); // every failure is a sender-permission error (send-0008)
    const id = out["messages sent"].Messages[0].To[0].MessageID as bigint;
    expect(id).toBeGreaterThanOrEqual(FIRST_MESSAGE_ID);
    expect(stdout).toContain(`"MessageID": ${id}`); // a bare integer, every digit
    expect(mj.deliveredTo.get(a)).toBe(1);
  });

  it("exits 3 when messages sent fired but no message of the batch was sent, so that a script notices", async () => {
    const unverified = { From: { Email: "x@unverified.org" } };
    const [a, b] = [addr(), addr()];
    const { code, out } = await cli({
      params,
      request: { Messages: [message(a, unverified), message(b, unverified)] },
    });
    expect(code).toBe(3);
    expect(out.error).toBeUndefined();
    expect(out["messages sent"].Messages.map((m: { Status: string }) => m.Status)).toEqual(["error", "error"]);
    expect(mj.deliveredTo.get(a)).toBeUndefined();
  });

  it("splits 120 recipients and prints one result per message in input order", async () => {
    const messages = Array.from({ length: 120 }, () => message(addr()));
    const { code, out } = await cli({ params, request: { Messages: messages } });
    expect(code).toBe(0);
    expect(out["messages sent"].Messages.map((m: { To: { Email: string }[] }) => m.To[0]!.Email)).toEqual(
      messages.map((m) => m.To[0]!.Email),
    );
  });

  it("exits 1 on a partial failure, printing both messages sent and error", async () => {
    const messages = Array.from({ length: 60 }, () => message(addr()));
    const tail = messages[50]!.To[0]!.Email;
    mj.fault({
      match: (body) => (body as { Messages?: { To: { Email: string }[] }[] }).Messages?.[0]?.To[0]?.Email === tail,
      status: 429,
      body: "<html><body><h1>429 Too Many Requests</h1></body></html>",
    });
    const { code, out } = await cli(
      { params, request: { Messages: messages } },
      { MAILJET_MAX_RETRIES: "0", MAILJET_CONCURRENCY: "1" },
    );
    expect(code).toBe(1);
    expect(out.error.details.code).toBe("partial_failure");
    expect(out.error.details.chunks.map((c: { status: string }) => c.status)).toEqual(["sent", "not_sent"]);
    expect(out["messages sent"].Messages).toHaveLength(60);
    expect(mj.deliveredTo.get(tail)).toBeUndefined();
  });

  it("exits 1 on invalid input and sends nothing", async () => {
    const before = mj.requests.length;
    const { code, out } = await cli({ params, request: { Messages: [message("nope")], SandboxMode: false } });
    expect(code).toBe(1);
    expect(out.error.details.code).toBe("invalid_input");
    expect(out.error.error).toContain("request.Messages[0].To[0].Email");
    expect(mj.requests.length).toBe(before);
  });

  it("takes the operator's credentials from MAILJET_API_KEY / MAILJET_SECRET_KEY and never prints them", async () => {
    const to = addr();
    const ok = await cli(
      { request: { Messages: [message(to)] } },
      { MAILJET_API_KEY: API_KEY, MAILJET_SECRET_KEY: SECRET_KEY },
    );
    expect(ok.code).toBe(0);
    expect(mj.deliveredTo.get(to)).toBe(1);
    const bad = await cli(
      { request: { Messages: [message(addr())] } },
      { MAILJET_API_KEY: API_KEY, MAILJET_SECRET_KEY: "not-the-secret-42" },
    );
    expect(bad.code).toBe(1);
    expect(bad.out.error.details.code).toBe("upstream_auth");
    expect(bad.stdout).not.toContain("not-the-secret-42");
  });
});
