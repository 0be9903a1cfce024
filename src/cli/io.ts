/** Small helpers the commands share: reading `--input`, writing JSON, exit codes. */
import { readFile } from "node:fs/promises";
import { parseJson, stringifyJson } from "../core/json.js";

/** Exit statuses: 0 success port fired, 1 error port fired, 2 usage error. */
export const EXIT = { OK: 0, ERROR: 1, USAGE: 2 } as const;

export class UsageError extends Error {
  override name = "UsageError";
}

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

/** `--input` is JSON text, `@path` to a file, or `-` for standard input. */
export async function readInput(spec: string): Promise<unknown> {
  let text: string;
  let from: string;
  if (spec === "-") {
    text = await readStdin();
    from = "standard input";
  } else if (spec.startsWith("@")) {
    from = spec.slice(1);
    try {
      text = await readFile(from, "utf8");
    } catch (err) {
      throw new UsageError(`Cannot read --input file ${from}: ${(err as Error).message}`);
    }
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

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
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

export async function printJson(value: unknown): Promise<void> {
  await write(`${stringifyJson(value, 2)}\n`);
}
