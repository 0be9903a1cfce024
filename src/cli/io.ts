/** Small helpers the commands share: reading `--input` and other files, writing JSON, exit codes. */
import { createReadStream } from "node:fs";
import { setting } from "../core/env.js";
import { ChainmailError } from "../core/errors.js";
import { parseJson, stringifyJson } from "../core/json.js";
import { BIGINT_FORMS, type BigintForm, inForm } from "../server/integers.js";

/**
 * Exit statuses: 0 success port fired, 1 error port fired, 2 usage error, 3 an email batch of which no message was
 * sent (`messages sent` fired, every result an error: a script must notice).
 */
export const EXIT = { OK: 0, ERROR: 1, USAGE: 2, NOTHING_SENT: 3 } as const;

/** A command line the command cannot run (a missing or malformed flag): `invalid_input`, exit status 2. */
export class UsageError extends ChainmailError {
  override name = "UsageError";
  constructor(message: string) {
    super("INVALID_INPUT", message);
  }
}

/**
 * A flag that must be given. Checked by the command itself rather than declared required: commander checks required
 * flags before unknown ones, and `--inptu` must be reported as the misspelling it is, not as a missing `--input`.
 */
export function required<T>(flag: string, value: T | undefined): T {
  if (value === undefined) throw new UsageError(`${flag} is required`);
  return value;
}

/** `--bigint <form>`: how JSON output writes integers beyond 2^53, as the service's `?bigint=` does. */
export const BIGINT_FLAG = [
  "--bigint <form>",
  `integers beyond 2^53 (MessageIDs): ${BIGINT_FORMS.join(" or ")}; number (default) is a bare JSON integer with every digit, string its decimal digits in a string, which every JSON tool (jq) reads exactly`,
] as const;

/** The `--bigint` form asked for (default `number`). */
export function bigintOption(value: string | undefined): BigintForm {
  if (value === undefined) return "number";
  if ((BIGINT_FORMS as readonly string[]).includes(value)) return value as BigintForm;
  throw new UsageError(
    `--bigint ${JSON.stringify(value.slice(0, 64))} is invalid: must be one of: ${BIGINT_FORMS.join(", ")}`,
  );
}

/** `1 poll`, `2 polls`: a count and its noun. */
export const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** A flag's integer value from 0 to `max`; undefined when the flag was not given. */
export function integerOption(
  flag: string,
  value: string | undefined,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0 || n > max) {
    const rule = max === Number.MAX_SAFE_INTEGER ? "an integer >= 0" : `an integer from 0 to ${max}`;
    throw new UsageError(`${flag} ${value} is invalid: must be ${rule}`);
  }
  return n;
}

/** `n` bytes for people: `1 MiB`, `30 MiB`, `1500 bytes`. */
const bytesText = (n: number): string =>
  n % 2 ** 20 === 0 ? `${n / 2 ** 20} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;

/**
 * Reads a file (or, for `-`, standard input) as text, at most `limit` bytes: what is larger is refused as soon as it
 * is, whatever it is (a file, a pipe, a device that never ends such as /dev/urandom), so memory stays bounded.
 * `what` names it in messages, e.g. `--config watch.json`.
 */
export async function readTextFile(path: string, limit: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const source = path === "-" ? process.stdin : createReadStream(path, { highWaterMark: 64 * 1024 });
    // Leaving the loop early (the limit) closes the stream: nothing more is read.
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new UsageError(`${what} is larger than ${bytesText(limit)}: at most that is read`);
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`Cannot read ${what}: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The largest `--input` read: the service's request body limit (CHAINMAIL_BODY_LIMIT_BYTES, default 30 MiB). */
const inputLimit = () => setting(process.env, "CHAINMAIL_BODY_LIMIT_BYTES");

/** `--input` is JSON text, `@path` to a file, or `-` for standard input. */
export async function readInput(spec: string): Promise<unknown> {
  let text: string;
  let from: string;
  if (spec === "-") {
    from = "standard input";
    text = await readTextFile("-", inputLimit(), "--input - (standard input)");
  } else if (spec.startsWith("@")) {
    from = spec.slice(1);
    text = await readTextFile(from, inputLimit(), `--input file ${from}`);
  } else {
    text = spec;
    from = "--input";
  }
  try {
    return parseJson(text);
  } catch (err) {
    throw new UsageError(`The input from ${from} is not valid JSON: ${(err as Error).message}`);
  }
}

// A reader that goes away (`chainmail run … | head`) is not an error worth a stack trace: stop quietly.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw err;
});

/** Writes to stdout, waiting when the pipe is full so memory stays flat. */
export async function write(text: string): Promise<void> {
  if (process.stdout.write(text)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      process.stdout.off("drain", done).off("close", done);
      resolve();
    };
    process.stdout.once("drain", done).once("close", done);
  });
}

/** Prints `value` as JSON (integers beyond 2^53 as strings with `bigint: "string"`). */
export async function printJson(value: unknown, bigint: BigintForm = "number"): Promise<void> {
  await write(`${stringifyJson(inForm(value, bigint), 2)}\n`);
}
