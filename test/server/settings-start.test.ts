/**
 * Settings are checked at start, by every command, through the one schema (src/core/env.ts): a bad value is refused
 * before anything runs, naming the variable and what is wrong (exit 2), never found at call time, never in Node's
 * words ("Invalid URL", getaddrinfo, a range error), never a stack. Durations are bounded by Node's longest timer, so
 * none turns into 1 ms. A missing key's message says what stands in for it. Real processes of the built CLI
 * (`npm run build` first) against the local NFTPort and Mailjet servers; property-based over random values.
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases in process (default 300), a tenth of them through the CLI.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import {
  checkSettings,
  EMAIL_TRANSPORTS,
  type EnvName,
  EnvSchema,
  isHost,
  MAX_DURATION_MS,
  NFT_SOURCES,
  urlProblem,
} from "../../src/core/env.js";
import { ChainmailError } from "../../src/core/errors.js";
import { parseJson } from "../../src/core/json.js";
import { startServer } from "../../src/server/index.js";
import { type CliResult, runCli } from "../support/helpers.js";
import { type MailjetServer, startMailjet } from "../upstreams/mailjet.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { standardDataset } from "../upstreams/nftport-data.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261128);
/** A process per case: a tenth of the cases (each a `chainmail nodes`, well under a second). */
const CLI_RUNS = Math.max(10, Math.round(RUNS / 10));

let nftport: NftportServer;
let mailjet: MailjetServer;
let dir: string;
let watchFile: string;

beforeAll(async () => {
  [nftport, mailjet] = await Promise.all([startNftport(standardDataset(5)), startMailjet()]);
  dir = mkdtempSync(join(tmpdir(), "chainmail-settings-"));
  watchFile = join(dir, "watch.json");
  writeFileSync(watchFile, JSON.stringify({ rules: [] }));
});
afterAll(async () => {
  await Promise.all([nftport.close(), mailjet.close()]);
});

const TOKEN = "0xf9a412fe25c3b7f01bd11e7cab2965cf56eaa778";
const byToken = (params: object = { api_key: VALID_KEY }) =>
  JSON.stringify({ query: { contract_address: TOKEN, token_id: "1" }, params });

/** Every command a user starts, each given what it needs to get past its own flags. */
const COMMANDS: Record<string, () => string[]> = {
  run: () => ["run", "nft-transactions-by-token", "--input", byToken()],
  serve: () => ["serve", "--port", "0"],
  watch: () => ["watch", "--config", watchFile, "--once"],
  index: () => ["index", "--once", "--rpc", "http://127.0.0.1:9", "--db", join(dir, "index.sqlite")],
  nodes: () => ["nodes"],
  outbox: () => ["outbox", "list", "--dir", join(dir, "outbox")],
};

/** A refusal at start: exit 2, nothing on stdout, one line naming the variable, no stack, never `internal`. */
function expectRefusedAtStart(out: CliResult, variable: string, reason: RegExp): void {
  expect(out.timedOut).toBeUndefined();
  expect(out.code, out.stderr).toBe(2);
  expect(out.stdout).toBe("");
  expect(out.stderr).toMatch(new RegExp(`^chainmail: Setting ${variable}[ =]`));
  expect(out.stderr).toMatch(reason);
  expectNoNodeWords(out);
}

function expectNoNodeWords(out: CliResult): void {
  const all = out.stdout + out.stderr;
  expect(all).not.toMatch(/\n\s+at |Invalid URL|getaddrinfo|ERR_|RangeError|TimeoutOverflowWarning|internal/i);
}

describe("the issue's settings, through the built CLI", () => {
  const URL_RULE = /must be an absolute http:\/\/ or https:\/\/ URL, e\.g\. http:\/\/localhost:\d+\b/;

  it("HTTPS_PROXY=x is named at start, not 'Invalid URL'", async () => {
    const out = await runCli(COMMANDS.run!(), { env: { NFTPORT_BASE_URL: nftport.url, HTTPS_PROXY: "x" } });
    expectRefusedAtStart(out, "HTTPS_PROXY", URL_RULE);
  });

  it("a lower-case https_proxy is named as given", async () => {
    const out = await runCli(COMMANDS.run!(), { env: { NFTPORT_BASE_URL: nftport.url, https_proxy: "x" } });
    expectRefusedAtStart(out, "https_proxy", URL_RULE);
  });

  it("NFTPORT_BASE_URL without a scheme is named at start, and nothing is asked of NFTPort", async () => {
    const before = nftport.requests.length;
    const out = await runCli(COMMANDS.run!(), { env: { NFTPORT_BASE_URL: "api.nftport.xyz" } });
    expectRefusedAtStart(out, "NFTPORT_BASE_URL", /does not start with http:\/\/ or https:\/\//);
    expect(out.stderr).toMatch(URL_RULE);
    expect(nftport.requests.length).toBe(before);
  });

  it("INDEX_RPC_URL=localhost:8545 is named at start by `index`, `watch` and `run`", async () => {
    for (const command of ["index", "watch", "run"]) {
      const args = command === "index" ? ["index", "--once", "--db", join(dir, "i.sqlite")] : COMMANDS[command]!();
      const out = await runCli(args, { env: { INDEX_RPC_URL: "localhost:8545" } });
      expectRefusedAtStart(out, "INDEX_RPC_URL", URL_RULE);
    }
  });

  it("a URL's value is never shown (it may hold a key)", async () => {
    const out = await runCli(COMMANDS.run!(), { env: { INDEX_RPC_URL: "eth-mainnet.example/v2/SECRETKEY123" } });
    expectRefusedAtStart(out, "INDEX_RPC_URL", URL_RULE);
    expect(out.stderr).not.toContain("SECRETKEY123");
  });

  it("CHAINMAIL_HOST=__proto__ is named at start by `serve`, not getaddrinfo", async () => {
    const out = await runCli(COMMANDS.serve!(), { env: { CHAINMAIL_HOST: "__proto__" } });
    expectRefusedAtStart(out, "CHAINMAIL_HOST", /="__proto__" is invalid: .*must be a host name or an IP address/);
  });

  it("a well-formed CHAINMAIL_HOST that is no address of this machine is named too", async () => {
    // TEST-NET-1 (RFC 5737): never an address of this machine, and no name lookup.
    const out = await runCli(COMMANDS.serve!(), { env: { CHAINMAIL_HOST: "192.0.2.1" }, timeoutMs: 20_000 });
    expectRefusedAtStart(out, "CHAINMAIL_HOST", /="192\.0\.2\.1" is invalid: it is not an address of this machine/);
  });

  it("`serve --host` and `index --rpc` are checked by the same rules", async () => {
    const host = await runCli(["serve", "--port", "0", "--host", "__proto__"]);
    expect(host.code).toBe(2);
    expect(host.stderr).toMatch(/^chainmail: --host "__proto__" is invalid: must be a host name or an IP address/);
    const rpc = await runCli(["index", "--once", "--rpc", "localhost:8545", "--db", join(dir, "r.sqlite")]);
    expect(rpc.code).toBe(2);
    expect(rpc.stderr).toMatch(/^chainmail: --rpc is invalid: it does not start with http:\/\/ or https:\/\//);
    expectNoNodeWords(host);
    expectNoNodeWords(rpc);
  });

  it("a huge CHAINMAIL_HEADERS_TIMEOUT_MS is named at start, not Node's range error", async () => {
    const out = await runCli(COMMANDS.serve!(), { env: { CHAINMAIL_HEADERS_TIMEOUT_MS: "99999999999" } });
    expectRefusedAtStart(
      out,
      "CHAINMAIL_HEADERS_TIMEOUT_MS",
      /="99999999999" is invalid: must be an integer from 1 to 3600000/,
    );
  });

  it("a *_TIMEOUT_MS of 2^31 is refused at start, naming Node's longest timer", async () => {
    const out = await runCli(COMMANDS.run!(), {
      env: { NFTPORT_BASE_URL: nftport.url, NFTPORT_TIMEOUT_MS: String(2 ** 31) },
    });
    expectRefusedAtStart(
      out,
      "NFTPORT_TIMEOUT_MS",
      /="2147483648" is invalid: .* from 1 to 2147483647 \(ms; Node's longest timer/,
    );
  });

  it("the longest duration accepted is a real timeout: the call succeeds, no timer overflows", async () => {
    const env = { NFTPORT_BASE_URL: nftport.url, CHAINMAIL_MAX_RETRIES: "0" };
    for (const name of ["CHAINMAIL_TIMEOUT_MS", "NFTPORT_TIMEOUT_MS", "CHAINMAIL_RETRY_BUDGET_MS"]) {
      const out = await runCli(COMMANDS.run!(), { env: { ...env, [name]: String(MAX_DURATION_MS) } });
      expect(out.code, out.stdout + out.stderr).toBe(0);
      expect(out.stderr).toBe("");
      expect((parseJson(out.stdout) as { response: { status: number } }).response.status).toBe(200);
    }
  });

  it("every command refuses a bad setting at start, with the same message and exit 2", async () => {
    for (const [name, args] of Object.entries(COMMANDS)) {
      const out = await runCli(args(), { env: { MAILJET_BASE_URL: "mailjet" } });
      expectRefusedAtStart(out, "MAILJET_BASE_URL", URL_RULE);
      expect(out.stderr, name).toMatch(/does not start with http:\/\/ or https:\/\//);
    }
  });

  it("the library's startServer checks every setting too, even one a given option stands in for", async () => {
    const refused = await startServer({ config: loadConfig({ CHAINMAIL_PORT: "http" }), port: 0 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ChainmailError);
    expect((refused as ChainmailError).toPayload()).toEqual({
      error: 'Setting CHAINMAIL_PORT="http" is invalid: must be an integer from 0 to 65535.',
      details: { code: "invalid_input", setting: "CHAINMAIL_PORT" },
    });
  });

  it("--help and --version still answer under a bad setting", async () => {
    const env = { HTTPS_PROXY: "x" };
    expect((await runCli(["--help"], { env })).code).toBe(0);
    expect((await runCli(["run", "--help"], { env })).code).toBe(0);
    expect((await runCli(["--version"], { env })).code).toBe(0);
  });
});

/** Every reason a URL setting is refused for (up to the scheme list), none of which repeats the value. */
const URL_REASONS = [
  "it holds a space or a control character",
  "it does not start with …",
  "it does not start with smtp:// or smtps://",
  "it is not a well-formed URL",
  "it names no host",
  "it has a ?query or a #fragment",
  "it has a path, a ?query or a #fragment",
  "its user or password holds a % not followed by two hex digits",
];

describe("a URL's host is as written", () => {
  it("http:///x names no host: the URL parser would mend it into a host x", () => {
    for (const raw of ["http:///x", "https:///&"]) expect(urlProblem(raw)).toBe("it names no host");
    for (const raw of ["http://?x", "http://#x", "http://\\\\x"]) expect(urlProblem(raw)).toBeDefined();
    expect(urlProblem("http://x/")).toBeUndefined();
  });
});

describe("random values of URL, host and number settings", () => {
  const kinds = (format: string) =>
    (Object.keys(EnvSchema.properties) as EnvName[]).filter((name) => {
      const schema = EnvSchema.properties[name] as { "x-format"?: string; type?: string };
      return format === "integer" ? schema.type === "integer" : schema["x-format"] === format;
    });
  const names = [...kinds("http-url"), ...kinds("smtp-url"), ...kinds("host"), ...kinds("integer")];
  // Near misses as well as noise: schemes, hosts, addresses, numbers around every bound.
  const raw = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: "binary", maxLength: 20 }),
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc
      .tuple(fc.constantFrom("http://", "https://", "smtp://", "ftp://", "//", "http:"), fc.string())
      .map(([a, b]) => a + b),
    fc.domain(),
    fc.ipV4(),
    fc.ipV6(),
    fc.constantFrom("__proto__", "constructor", "localhost:8545", "0x10", "1e3", "-1", "2147483648", "Infinity"),
    fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  );
  const cases = fc.tuple(fc.constantFrom(...names), raw).filter(([, value]) => value !== "");

  it("in process: accepted as its form, or refused as invalid_input naming the variable, never shown if a URL", () => {
    fc.assert(
      fc.property(cases, ([name, value]) => {
        const schema = EnvSchema.properties[name] as { "x-format"?: string; type?: string; maximum?: number };
        let thrown: unknown;
        try {
          checkSettings({ [name]: value });
          loadConfig({ [name]: value });
        } catch (err) {
          thrown = err;
        }
        if (thrown === undefined) {
          // Accepted: it is what its rule says, so nothing downstream meets a value it cannot use.
          if (schema.type === "integer") expect(Number(value)).toBeLessThanOrEqual(schema.maximum!);
          if (schema["x-format"] === "http-url") expect(urlProblem(value)).toBeUndefined();
          if (schema["x-format"] === "host") expect(isHost(value)).toBe(true);
          return;
        }
        expect(thrown).toBeInstanceOf(ChainmailError);
        const payload = (thrown as ChainmailError).toPayload();
        expect(payload.details).toEqual({ code: "invalid_input", setting: name });
        expect(payload.error).toMatch(new RegExp(`^Setting ${name}[ =]`));
        // A URL is named, never shown: the sentence is made of the name, a reason of its own and the rule alone.
        if (schema["x-format"]?.endsWith("url")) {
          const [, reason] = /^Setting \w+ is invalid: (?:(.*); it )?must be [^;]*\.$/.exec(payload.error) ?? [];
          expect(payload.error).toMatch(/^Setting \w+ is invalid: /);
          if (reason !== undefined) expect(URL_REASONS).toContain(reason.replace(/http.*$/, "…"));
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it(
    "through the CLI: exit 0 or a refusal naming the variable, never internal, never a stack",
    async () => {
      await fc.assert(
        // A process environment cannot hold a NUL: such a value never reaches a command.
        fc.asyncProperty(
          cases.filter(([, value]) => !value.includes("\0")),
          async ([name, value]) => {
            const out = await runCli(["nodes"], { env: { [name]: value } });
            expect(out.timedOut).toBeUndefined();
            expectNoNodeWords(out);
            if (out.code === 0) {
              expect(() => checkSettings({ [name]: value })).not.toThrow();
              return;
            }
            expect(out.code).toBe(2);
            expect(out.stderr).toMatch(new RegExp(`^chainmail: Setting ${name}[ =]`));
          },
        ),
        { numRuns: CLI_RUNS, seed: SEED },
      );
    },
    CLI_RUNS * 3_000,
  );
});

describe("a missing key says what stands in for it", () => {
  it("params.api_key: NFTPORT_API_KEY, or another source (NFT_SOURCE=index|opensea); field unchanged", async () => {
    const out = await runCli(["run", "nft-transactions-by-token", "--input", byToken({})], {
      env: { NFTPORT_BASE_URL: nftport.url },
    });
    expect(out.code).toBe(1);
    const { error } = parseJson(out.stdout) as {
      error: { error: string; details: { violations: { field: string; rule: string; message: string }[] } };
    };
    const [violation] = error.details.violations;
    expect(violation).toMatchObject({ field: "params.api_key", rule: "required" });
    expect(violation!.message).toMatch(/^params\.api_key is required: .*NFTPORT_API_KEY.*NFT_SOURCE=index\|opensea/);
    expect(error.error).toContain(violation!.message);
  });

  it('params["user id"]: MAILJET_API_KEY / MAILJET_SECRET_KEY, or EMAIL_TRANSPORT=smtp|outbox', async () => {
    const input = {
      request: { Messages: [{ From: { Email: "a@example.com" }, To: [{ Email: "b@example.com" }], TextPart: "hi" }] },
    };
    const out = await runCli(["run", "email-send", "--input", JSON.stringify(input)], {
      env: { MAILJET_BASE_URL: mailjet.url },
    });
    expect(out.code).toBe(1);
    const { error } = parseJson(out.stdout) as {
      error: { details: { violations: { field: string; rule: string; message: string }[] } };
    };
    const byField = Object.fromEntries(error.details.violations.map((v) => [v.field, v]));
    expect(byField['params["user id"]']).toMatchObject({ rule: "required" });
    expect(byField['params["user id"]']!.message).toMatch(
      /^params\["user id"\] is required: .*MAILJET_API_KEY.*MAILJET_SECRET_KEY.*EMAIL_TRANSPORT=smtp\|outbox/,
    );
    expect(byField["params.password"]!.message).toMatch(/MAILJET_SECRET_KEY.*EMAIL_TRANSPORT=smtp\|outbox/);
  });

  it("chainmail --help lists every source and transport with the settings each needs", async () => {
    const out = await runCli(["--help"]);
    expect(out.code).toBe(0);
    for (const source of NFT_SOURCES)
      expect(out.stdout).toMatch(new RegExp(`NFT_SOURCE=${source.replace("+", "\\+")} `));
    for (const transport of EMAIL_TRANSPORTS) expect(out.stdout).toContain(`EMAIL_TRANSPORT=${transport} `);
    for (const name of [
      "NFTPORT_API_KEY",
      "OPENSEA_API_KEY",
      "INDEX_RPC_URL",
      "INDEX_DB",
      "CHAINMAIL_SERVICE_URL",
      "MAILJET_API_KEY",
      "MAILJET_SECRET_KEY",
      "SMTP_URL",
      "OUTBOX_DIR",
    ])
      expect(out.stdout).toContain(name);
  });
});
