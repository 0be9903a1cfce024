/**
 * The real runtimes the workflow-package tests drive: Node 24, Node-RED and n8n as scripts/ci/runtimes.sh
 * installs them (its output names them: NODE24, NODE_RED, N8N, N8N_USER_SEED), each package packed into a
 * tarball as `npm pack` gives it to users. Run with `scripts/ci/workflow-tests.sh`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

export const ROOT = join(import.meta.dirname, "..", "..");

/** A path the runtimes script gave; the tests cannot run without it. */
export function runtime(name: "NODE24" | "NODE_RED" | "N8N" | "N8N_USER_SEED"): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the workflow tests through scripts/ci/workflow-tests.sh`);
  return value;
}

/** The environment of a process of the Node 24 runtime: this one's (npm's certificates, HOME), Node 24 first on PATH. */
export const node24Env = (extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    // Not the test runner's own settings (vitest's, the upstream URLs of other tests).
    if (
      value !== undefined &&
      !/^(VITEST|NODE_OPTIONS|NODE_ENV|TEST|NFTPORT_|MAILJET_|CHAINMAIL_|NFT_SOURCE)/.test(name)
    )
      env[name] = value;
  }
  return { ...env, PATH: `${runtime("NODE24")}:${process.env.PATH ?? ""}`, ...extra };
};

export const exec = promisify(execFile);

/** `npm pack` of a package folder into a fresh folder; the tarball's path. */
export async function pack(pkg: string): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), "chainmail-pack-"));
  await exec("npm", ["pack", "--silent", "--pack-destination", out], { cwd: join(ROOT, "packages", pkg) });
  const tarball = readdirSync(out).find((file) => file.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack left no tarball for ${pkg}`);
  return join(out, tarball);
}

/** Installs a tarball alone into `dir` (a folder with a package.json), as a user would. */
export async function installTarball(dir: string, tarball: string, env: Record<string, string>): Promise<void> {
  // Peers are the host's own (n8n-workflow): nothing but the tarball is fetched.
  await exec("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", "--legacy-peer-deps", tarball], {
    cwd: dir,
    env,
  });
}

export interface Running {
  child: ChildProcess;
  output: () => string;
  /** Resolves when the output (from character `from` on) matches `pattern`; rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number, from?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a long-running process (a Node-RED or n8n server), keeping its output for assertions and errors. */
export function start(command: string, args: string[], env: Record<string, string>, cwd?: string): Running {
  // Its own process group: stopping it stops what it started too (n8n's task runner).
  const child = spawn(command, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let text = "";
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString("utf8");
    for (const listener of listeners) listener();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => text,
    waitFor(pattern, timeoutMs = 90_000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(text.slice(from))) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${text.slice(-4000)}`));
        }, timeoutMs);
        const gone = () => {
          cleanup();
          reject(new Error(`the process exited before ${pattern}; output:\n${text.slice(-4000)}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off("exit", gone);
        };
        listeners.add(check);
        child.once("exit", gone);
        check();
      });
    },
    async stop() {
      const signal = (name: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, name);
        } catch {
          // The group is gone already.
        }
      };
      if (child.exitCode === null && child.signalCode === null) signal("SIGTERM");
      const killer = setTimeout(() => signal("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killer);
      signal("SIGKILL");
    },
  };
}

/** Waits until `check` holds, polling; fails with `what` after `timeoutMs`. */
export async function eventually(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A loopback port free right now (for a server that must be told its port: Node-RED, n8n). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
