/**
 * One error hierarchy: every error class in src is a `ChainmailError` (so it carries a code, whether it is
 * retryable and its details), every code's HTTP status and retryability come from `ErrorCode`, and docs/errors.md
 * lists each code with both.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ChainmailError,
  ErrorCode,
  httpStatusOf,
  InvalidInputError,
  invalidInput,
  isRetryableCode,
  toErrorPayload,
} from "../../src/core/errors.js";

const SRC = resolve(import.meta.dirname, "../../src");

/**
 * Error classes that are not ChainmailErrors, each for a reason: a parse error is a SyntaxError like JSON.parse's
 * (its caller decides whether it is bad input or a bad answer); the node pool's connect timeout wears undici's
 * error code, which the retry rules read; the JSON-RPC client's errors carry the node's numeric JSON-RPC `code` and
 * are turned into ChainmailErrors where the index reports them. Every other error class must extend ChainmailError.
 */
const NOT_CHAINMAIL = new Set(["JsonTooDeepError", "ConnectTimeout", "RpcError", "Retryable"]);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

describe("the error hierarchy", () => {
  it("has no error class outside ChainmailError but the listed ones", () => {
    const classes = new Map<string, string>();
    for (const file of files(SRC)) {
      for (const m of readFileSync(file, "utf8").matchAll(/class (\w+) extends (\w+)/g)) classes.set(m[1]!, m[2]!);
    }
    // A class is fine when it, or a class it extends, is ChainmailError or one of the listed exceptions.
    const fine = (name: string): boolean =>
      name === "ChainmailError" || NOT_CHAINMAIL.has(name) || (classes.has(name) && fine(classes.get(name)!));
    const errors = [...classes].filter(([, base]) => /Error$/.test(base) || classes.has(base));
    const outside = errors.filter(([name]) => !fine(name)).map(([n]) => n);
    expect(errors.length).toBeGreaterThan(8);
    expect(outside).toEqual([]);
  });

  it("gives each error its code's retryability and status", () => {
    const timeout = new ChainmailError("UPSTREAM_TIMEOUT", "slow", { details: { timeout_ms: 5 } });
    expect(timeout).toMatchObject({ code: "upstream_timeout", retryable: true, details: { timeout_ms: 5 } });
    expect(new ChainmailError("upstream_auth", "no").retryable).toBe(false);
    expect(httpStatusOf("upstream_timeout")).toBe(504);
    expect(isRetryableCode("upstream_rate_limited")).toBe(true);
    expect(isRetryableCode("invalid_input")).toBe(false);
    expect(isRetryableCode("no_such_code")).toBe(false);
    // A code another chainmail's service answered, passed on by a page: kept as it is, not retryable.
    expect(new ChainmailError("no_such_code" as never, "x")).toMatchObject({ code: "no_such_code", retryable: false });
  });

  it("builds invalid_input and internal payloads through the class", () => {
    const violation = { field: "query.page_size", rule: "integer >= 1", message: "query.page_size must be >= 1" };
    expect(invalidInput([violation])).toEqual({
      error: "Invalid input (1 problem): query.page_size must be >= 1",
      details: { code: "invalid_input", violations: [violation] },
    });
    expect(new InvalidInputError([violation]).toPayload()).toEqual(invalidInput([violation]));
    expect(toErrorPayload(new TypeError("boom"))).toEqual({
      error: "Internal error in chainmail: boom. Please report it.",
      details: { code: "internal" },
    });
  });

  it("lists every code in docs/errors.md with its status and retryability", () => {
    const doc = readFileSync(resolve(import.meta.dirname, "../../docs/errors.md"), "utf8");
    for (const { code, httpStatus, retryable } of Object.values(ErrorCode)) {
      const row = doc.split("\n").find((line) => line.startsWith(`| \`${code}\``));
      const cells = row?.split("|").map((c) => c.trim());
      expect(cells?.slice(-3, -1), code).toEqual([String(httpStatus), retryable ? "yes" : "no"]);
    }
  });
});
