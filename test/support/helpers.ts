/** Test helpers: configs pointing at the local upstreams, fast retries; the command line in its own process. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Config, loadConfig } from "../../src/core/config.js";

/**
 * A promise settled from outside. Its rejection is marked handled here, so a test may reject one nobody awaits yet;
 * awaiting it still throws.
 */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** A config for tests: local base URLs, short backoff so retry tests stay quick. */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    CHAINMAIL_RETRY_BASE_MS: "20",
    CHAINMAIL_RETRY_MAX_DELAY_MS: "2000",
    CHAINMAIL_TIMEOUT_MS: "5000",
    ...env,
  });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the process had not exited within `timeoutMs` and was killed. */
  timedOut?: boolean;
}

/**
 * `chainmail index`'s stderr without the line it writes every minute without a terminal (`chainmail index: block N
 * of M; …`): a run on a loaded machine may last long enough to write one, and it is not a warning.
 */
export function warningsOf(stderr: string): string {
  return stderr.replace(/^chainmail index: block \d+ of \d+; [^\n]*\n/gm, "");
}

/** The built command line (`npm test` builds it first). */
export const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

/**
 * Runs `chainmail <args>` in its own process, as a user would, with only PATH and `env` in its environment
 * (asynchronously: the local upstream servers live in the test's process). `preload`: modules node loads into
 * that process first (`node --import`), for tests that observe it from inside.
 */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; preload?: string[]; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const imports = (options.preload ?? []).flatMap((file) => ["--import", pathToFileURL(file).href]);
    const child = spawn(process.execPath, [...imports, CLI, ...args], {
      env: { PATH: process.env.PATH ?? "", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill("SIGKILL");
          }, options.timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ...(timedOut ? { timedOut } : {}) });
    });
    child.stdin.end(options.stdin ?? "");
  });
}
