/**
 * One Ctrl-C at any moment of `chainmail demo` (what `npm start` runs) stops everything within seconds and says so:
 * SIGINT to the whole process group, as a terminal sends it (anvil, in the same group, dies from it too), at several
 * moments of start-up and once it runs. Afterwards no process of the group is left and the service's port is closed.
 * Needs `npm run build` first (`npm test` does it).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../support/helpers.js";

/**
 * Each case's own waits fit inside its time limit, with room to report: on a loaded machine a slow start-up or a
 * slow stop fails with what the demo printed, never with the runner's bare timeout.
 */
const STARTUP_MS = 90_000;
const EXIT_MS = 20_000;
const CASE_MS = STARTUP_MS + EXIT_MS + 10_000;

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** Whether any process of the group `pgid` is still there. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends SIGINT to the anvil of the group `pgid` alone: it handled the terminal's Ctrl-C before the demo did. */
function interruptAnvil(pgid: number): void {
  const table = execFileSync("ps", ["-e", "-o", "pid=,pgid=,comm="], { encoding: "utf8" });
  for (const line of table.trim().split("\n")) {
    const [pid, group, command] = line.trim().split(/\s+/);
    if (Number(group) === pgid && command?.startsWith("anvil")) process.kill(Number(pid), "SIGINT");
  }
}

/**
 * Starts the demo (`chainmail demo`, or `npm start` with `viaNpm`) as the leader of its own process group, waits
 * until its output holds `marker` (and, with `healthz`, until the service answers /healthz), sends SIGINT to the
 * group, and reports how it ended: `status` as a shell sees it (128 + the signal's number for a process a signal
 * ended).
 */
async function interruptAt(marker: string, healthz = false, viaNpm = false, anvilFirstMs = 0) {
  const dataDir = mkdtempSync(join(tmpdir(), "chainmail-demo-int-"));
  dataDirs.push(dataDir);
  const demoArgs = ["--port", "0", "--data-dir", dataDir];
  const [command, args] = viaNpm
    ? ["npm", ["start", "--silent", "--", ...demoArgs]]
    : [process.execPath, [CLI, "demo", ...demoArgs]];
  const child = spawn(command, args, {
    cwd: join(import.meta.dirname, "..", ".."),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    output += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    output += d;
  });
  const exited = new Promise<number>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0))),
  );
  // One deadline for every wait of the start-up together.
  const deadline = Date.now() + STARTUP_MS;
  const until = async (done: () => boolean | Promise<boolean>, what: string) => {
    while (!(await done())) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${what}: not seen. Output:\n${output}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  try {
    await until(() => output.includes(marker), marker);
    const service = output.match(/HTTP service at (http:\/\/\S+)/)?.[1];
    if (healthz) {
      await until(
        () =>
          fetch(`${service}/healthz`).then(
            (r) => r.ok,
            () => false,
          ),
        "/healthz answering",
      );
    }
    if (anvilFirstMs > 0) {
      interruptAnvil(child.pid!);
      await new Promise((r) => setTimeout(r, anvilFirstMs));
    }
    if (groupAlive(child.pid!)) process.kill(-child.pid!, "SIGINT");
    // A few seconds at most; far more here, so that a loaded machine does not decide.
    const status = await Promise.race([exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), EXIT_MS))]);
    const anvil = output.match(/anvil \(dev chain\) at (http:\/\/\S+)/)?.[1];
    return { status, output, groupAlive: groupAlive(child.pid!), service, anvil };
  } finally {
    if (groupAlive(child.pid!)) process.kill(-child.pid!, "SIGKILL");
  }
}

const refused = (url: string | undefined) =>
  url === undefined
    ? Promise.resolve(true)
    : fetch(url, { method: "POST", body: "{}" }).then(
        () => false,
        () => true,
      );

describe.skipIf(process.platform === "win32")("Ctrl-C during chainmail demo", () => {
  it.each([
    ["while it deploys the contracts", "1. anvil", false, "Stopped during start-up"],
    ["while it creates activity", "2. deployed", false, "Stopped during start-up"],
    ["while it indexes", "3. created activity", false, "Stopped during start-up"],
    // The rest of the start-up can finish before the signal lands (the watch now wakes at once): either ending is a stop that says so.
    [
      "right after the service answers /healthz",
      "5. HTTP service",
      true,
      /Stopped during start-up|Stopped: service, indexer, watch and anvil are down\./,
    ],
    ["while the watch starts", "6. sales digest", false, "Stopped during start-up"],
    ["once it runs", "Press Ctrl-C", false, "Stopped: service, indexer, watch and anvil are down."],
  ])(
    "%s: stops everything and says so",
    async (_, marker, healthz, said) => {
      const end = await interruptAt(marker, healthz);
      expect(end.status, end.output).toBe(0);
      expect(end.output, end.output).toContain("SIGINT: stopping…");
      const last = end.output.trimEnd().split("\n").at(-1) ?? "";
      if (typeof said === "string") expect(last, end.output).toContain(said);
      else expect(last, end.output).toMatch(said);
      expect(end.groupAlive, end.output).toBe(false);
      expect(await refused(end.service), end.output).toBe(true);
      expect(await refused(end.anvil), end.output).toBe(true);
    },
    CASE_MS,
  );

  it(
    "while it deploys, anvil dying of the Ctrl-C a moment before the demo hears it: still a stop, not an error",
    async () => {
      const end = await interruptAt("1. anvil", false, false, 300);
      expect(end.status, end.output).toBe(0);
      expect(end.output.trimEnd().split("\n").at(-1), end.output).toContain("Stopped during start-up");
      expect(end.groupAlive, end.output).toBe(false);
    },
    CASE_MS,
  );

  it(
    "through npm start: the demo stops the same, and npm, interrupted too, ends with 130 (as docs/demo.md says)",
    async () => {
      const end = await interruptAt("Press Ctrl-C", false, true);
      expect(end.status, end.output).toBe(130);
      expect(end.output.trimEnd().split("\n").at(-1), end.output).toContain(
        "Stopped: service, indexer, watch and anvil are down.",
      );
      expect(end.groupAlive, end.output).toBe(false);
      expect(await refused(end.service), end.output).toBe(true);
    },
    CASE_MS,
  );
});
