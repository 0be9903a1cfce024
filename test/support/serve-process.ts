/** `chainmail serve` (the built CLI) as a process of its own, for the tests of the command and its workers. */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const MAIN = new URL("../../dist/cli/main.js", import.meta.url).pathname;
const started: ChildProcess[] = [];

export interface ServeProcess {
  child: ChildProcess;
  /** What it wrote so far on stdout (JSON log lines) and stderr (its own lines). */
  out(): string;
  err(): string;
}

export function serveProcess(args: string[], env: Record<string, string> = {}): ServeProcess {
  const child = spawn(process.execPath, [MAIN, "serve", ...args], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  return { child, out: () => stdout, err: () => stderr };
}

/** Resolves once `check` holds, polling; throws after `ms`. */
export async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The URL the service says it listens on, once it says so (throws if it exits first). */
export async function listeningUrl(proc: ServeProcess): Promise<string> {
  await until(() => /listening on (http:\S+)/.test(proc.err()) || proc.child.exitCode !== null, "listening");
  const found = /listening on (http:\S+)/.exec(proc.err());
  if (!found) throw new Error(`chainmail serve exited ${proc.child.exitCode}: ${proc.err()}`);
  return found[1]!;
}

/** The process ids of a process's children (Linux' /proc). */
export function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
}

/** Kills whatever the tests left running (afterEach), workers included. */
export function killServeProcesses(): void {
  for (const child of started.splice(0)) {
    if (child.exitCode !== null || child.pid === undefined) continue;
    try {
      for (const pid of childrenOf(child.pid)) process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
    child.kill("SIGKILL");
  }
}
