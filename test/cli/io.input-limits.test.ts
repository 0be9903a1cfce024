/**
 * Every file the command line reads (`--config`, `--input @file`, `--input -`) is read up to a byte limit that holds
 * whatever the file is: a regular file, a device that never ends (/dev/urandom, /dev/zero), a pipe that never ends.
 * Past the limit it is refused at once (exit 2) naming the file and the limit, and memory stays bounded; up to the
 * limit it is read whole. Real processes; their peak memory comes from test/fixtures/report-rss.mjs.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/helpers.js";

const RSS = join(import.meta.dirname, "..", "fixtures", "report-rss.mjs");
const dir = mkdtempSync(join(tmpdir(), "chainmail-input-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Far above what reading a limit's worth takes, far below what reading the whole of a device would. */
const MEMORY_BOUND = 400 * 2 ** 20;
const peakRss = (stderr: string) => Number(/peak-rss-bytes (\d+)/.exec(stderr)?.[1]);

const watchFile = (bytes: number) => {
  const body = JSON.stringify({ rules: [{ id: "r", mail: { to: [{ Email: "a@example.com" }] } }] });
  return `${body}${" ".repeat(bytes - body.length)}`;
};

describe("files the command line reads", () => {
  const devices = ["/dev/urandom", "/dev/zero"];
  it.each(devices)("--config %s: refused past 1 MiB, at once, memory bounded", async (device) => {
    const out = await runCli(["watch", "--config", device, "--once"], { preload: [RSS], timeoutMs: 20_000 });
    expect(out.timedOut).toBeUndefined();
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`chainmail: --config ${device} is larger than 1 MiB: at most that is read`);
    expect(peakRss(out.stderr)).toBeLessThan(MEMORY_BOUND);
  });

  it.each(devices)("--input @%s: refused past the input limit, at once, memory bounded", async (device) => {
    const out = await runCli(["run", "email-send", "--input", `@${device}`], { preload: [RSS], timeoutMs: 20_000 });
    expect(out.timedOut).toBeUndefined();
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`chainmail: --input file ${device} is larger than 30 MiB: at most that is read`);
    expect(peakRss(out.stderr)).toBeLessThan(MEMORY_BOUND);
  });

  it("--input - from a pipe that never ends: refused past the limit, and the pipe closed", async () => {
    const child = spawn(process.execPath, ["--import", RSS, CLI, "run", "email-send", "--input", "-"], {
      env: { PATH: process.env.PATH ?? "", CHAINMAIL_BODY_LIMIT_BYTES: String(2 ** 20) },
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.stdin.on("error", () => undefined); // the reader went away: what the test waits for
    const chunk = Buffer.alloc(64 * 1024, "[");
    const feed = () => {
      while (child.stdin.writable && child.stdin.write(chunk));
    };
    child.stdin.on("drain", feed);
    feed();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("chainmail: --input - (standard input) is larger than 1 MiB: at most that is read");
    expect(peakRss(stderr)).toBeLessThan(MEMORY_BOUND);
  });

  it("a file of exactly the limit is read; one byte more is refused", async () => {
    const limit = 4096;
    for (const size of [limit - 1, limit, limit + 1]) {
      const file = join(dir, `input-${size}.json`);
      const body = '{"request":{"Messages":[]}}';
      writeFileSync(file, `${body}${" ".repeat(size - body.length)}`);
      const out = await runCli(["run", "email-send", "--input", `@${file}`], {
        env: { CHAINMAIL_BODY_LIMIT_BYTES: String(limit) },
      });
      // Within the limit the node itself judges it (no messages: invalid_input on its error port, exit 1).
      if (size <= limit)
        expect({ size, code: out.code, stderr: out.stderr }).toMatchObject({ size, code: 1, stderr: "" });
      else expect(out.stderr).toContain(`--input file ${file} is larger than 4 KiB: at most that is read`);
    }
    const config = join(dir, "watch.json");
    for (const size of [2 ** 20, 2 ** 20 + 1]) {
      writeFileSync(config, watchFile(size));
      const out = await runCli(["watch", "--config", config, "--dry-run"]);
      if (size === 2 ** 20) expect(out.stderr).not.toContain("larger than");
      else
        expect({ code: out.code, stderr: out.stderr }).toEqual({
          code: 2,
          stderr: `chainmail: --config ${config} is larger than 1 MiB: at most that is read\n`,
        });
    }
  });
});
