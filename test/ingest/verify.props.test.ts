/**
 * The second endpoint's URL (`--verify-rpc`, the library's `verifyRpcUrl`), property-based: whatever string is
 * given, it is taken only as an absolute http(s) URL other than the endpoint indexed, and refused otherwise as
 * `invalid_input` naming the flag or option and the reason, never quoting the value (it may hold a provider key),
 * before anything is opened; never another error. `verifyHead` takes true or false only.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CommanderError } from "commander";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { urlProblem } from "../../src/core/env.js";
import { ChainmailError } from "../../src/core/errors.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { MAX_VERIFY_URL, verifyRpcProblem } from "../../src/ingest/verify.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261128);
const RPC = "http://127.0.0.1:1/";
const dir = mkdtempSync(join(tmpdir(), "chainmail-verify-props-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a user may type: URLs of every scheme, near-URLs, junk, long strings. */
const given = fc.oneof(
  fc.webUrl({ validSchemes: ["http", "https"], withQueryParameters: true, withFragments: true }),
  fc.webUrl({ validSchemes: ["ftp", "ws", "file", "javascript"] }),
  fc
    .tuple(fc.constantFrom("http://", "https://", "HTTP://", "http:", "http:/", " http://", ""), fc.string())
    .map(([a, b]) => a + b),
  fc.string({ unit: "grapheme", maxLength: 64 }),
  fc.string({ minLength: MAX_VERIFY_URL - 8, maxLength: MAX_VERIFY_URL + 8 }).map((s) => `http://a.b/${s}`),
  fc.constant(RPC),
);

/** Every reason a URL is refused for: fixed words, so the value itself is never quoted. */
const REASONS = [
  "must be an absolute http:// or https:// URL",
  `must be at most ${MAX_VERIFY_URL} characters`,
  "names the endpoint being indexed: the second endpoint must be another one",
];

/** Whether `value` is what the second endpoint must be: printable ASCII, an absolute http(s) URL, not `RPC`. */
function acceptable(value: string): boolean {
  if (value.length > MAX_VERIFY_URL || !/^[!-~]+$/.test(value) || !/^https?:\/\/[^\\/?#]/i.test(value)) return false;
  if (!URL.canParse(value) || urlProblem(value) !== undefined) return false;
  const url = new URL(value);
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" && url.href !== RPC;
}

describe("the second endpoint's URL", () => {
  it("is taken exactly when it is an absolute http(s) URL other than the one indexed, refused with a reason else", () => {
    fc.assert(
      fc.property(given, (value) => {
        const problem = verifyRpcProblem(value, RPC);
        expect(problem === undefined).toBe(acceptable(value));
        if (problem !== undefined) expect(REASONS).toContain(problem);
      }),
      { numRuns: RUNS * 3, seed: SEED },
    );
  });

  it("takes every plain http(s) URL", () => {
    fc.assert(
      fc.property(fc.webUrl({ validSchemes: ["http", "https"] }), (value) => {
        fc.pre(/^[!-~]+$/.test(value) && new URL(value).href !== RPC);
        expect(verifyRpcProblem(value, RPC)).toBeUndefined();
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("refused at the command line: invalid_input naming --verify-rpc, never the value", async () => {
    await fc.assert(
      fc.asyncProperty(
        given.filter((value) => !acceptable(value)),
        async (value) => {
          const program = buildProgram();
          program.exitOverride();
          program.commands.forEach((command) => {
            command.exitOverride();
          });
          const thrown = await program
            .parseAsync(["index", "--once", "--rpc", RPC, "--db", join(dir, "cli.sqlite"), "--verify-rpc", value], {
              from: "user",
            })
            .then(
              () => undefined,
              (err: unknown) => err,
            );
          // A value commander takes for a flag (`--x`) is its own usage error; every other one is ours.
          if (thrown instanceof CommanderError) return;
          expect(thrown).toBeInstanceOf(ChainmailError);
          const error = thrown as ChainmailError;
          expect(error.code).toBe("invalid_input");
          expect(REASONS.map((reason) => `--verify-rpc is invalid: ${reason}`)).toContain(error.message);
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
    expect(existsSync(join(dir, "cli.sqlite"))).toBe(false);
  });

  it("refused by the library before the index is opened: invalid_input naming verifyRpcUrl or verifyHead", async () => {
    const dbPath = join(dir, "library.sqlite");
    const bad = fc.oneof(
      given.filter((value) => !acceptable(value)).map((verifyRpcUrl) => ({ verifyRpcUrl }) as object),
      fc.oneof(fc.integer(), fc.string(), fc.constant(null)).map((verifyRpcUrl) => ({ verifyRpcUrl }) as object),
      fc.oneof(fc.integer(), fc.string(), fc.constant(null)).map((verifyHead) => ({ verifyHead }) as object),
    );
    await fc.assert(
      fc.asyncProperty(bad, async (options) => {
        const thrown = await indexChain({ rpcUrl: RPC, dbPath, follow: false, ...options }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(thrown).toBeInstanceOf(ChainmailError);
        const error = thrown as ChainmailError;
        expect(error.code).toBe("invalid_input");
        const field = Object.keys(options)[0]!;
        expect(error.details.field).toBe(field);
        const reasons = field === "verifyHead" ? ["must be true or false"] : REASONS;
        expect(reasons.map((reason) => `${field} is invalid: ${reason}.`)).toContain(error.message);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(existsSync(dbPath)).toBe(false);
  });
});
