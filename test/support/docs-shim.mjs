#!/usr/bin/env node
/**
 * `chainmail` as the documentation tests put it on PATH: the built CLI ($DOCS_TEST_CLI), run as pasted. Commands
 * that run until Ctrl-C (`serve`, `demo`, `index` without `--once`, `watch` without `--once`/`--dry-run`) are
 * started in the background instead, as a user would start them in another terminal: the shim returns once the
 * command is ready, and the test stops it (SIGTERM) when the block ends and checks that it exited 0. A following
 * `index` first runs once to the head (`--once`), so what comes next in the block reads an index that is there.
 *
 * $DOCS_TEST_STATE gets one `call-N.json` (argv, exit code) and `call-N.out` (stdout) per foreground call, and
 * `bg-N.json` (argv, pid, exit code once it ended) plus `bg-N.out` / `bg-N.err` per background command.
 *
 * A `watch` or `index` run while one of the same command runs in the background stops that one first, as the
 * user would with Ctrl-C before pasting the next line: one watch or indexer writes a store at a time, and a second
 * waits for the first to stop.
 */
import { spawn } from "node:child_process";
import { appendFileSync, openSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CLI = process.env.DOCS_TEST_CLI;
const STATE = process.env.DOCS_TEST_STATE;
const args = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What marks a background command as ready (in its stdout or stderr), or undefined for a foreground one. */
function readiness(argv) {
  const [command, sub] = argv;
  if (command === "serve") return /listening on/;
  if (command === "demo") return /^Running\./m;
  if (command === "index" && sub !== "migrate" && !argv.includes("--once")) return "index";
  if (command === "watch" && sub !== "status" && sub !== "resend" && !argv.includes("--once")) {
    return argv.includes("--dry-run") ? undefined : /\n/;
  }
  return undefined;
}

function nextId(prefix) {
  return readdirSync(STATE).filter((f) => f.startsWith(prefix) && f.endsWith(".json")).length + 1;
}

/**
 * Writes a record whole: the test and other shims read these files while they change, and a file rewritten in place
 * can be read half old, half new (CI: "Unexpected non-whitespace character after JSON").
 */
function writeRecord(path, value) {
  writeFileSync(`${path}.tmp`, JSON.stringify(value));
  renameSync(`${path}.tmp`, path);
}

/** Stops the background commands `argv` would wait for (SIGTERM, as Ctrl-C) and waits until they ended. */
async function stopSameCommand(argv) {
  const [command, sub] = argv;
  const writes =
    (command === "watch" && sub !== "status" && sub !== "resend" && !argv.includes("--dry-run")) ||
    (command === "index" && sub !== "migrate");
  if (!writes) return;
  for (const file of readdirSync(STATE).filter((f) => f.startsWith("bg-") && f.endsWith(".json"))) {
    const record = () => JSON.parse(readFileSync(join(STATE, file), "utf8"));
    const bg = record();
    if (bg.args[0] !== command || bg.code !== undefined) continue;
    try {
      process.kill(bg.pid, "SIGTERM");
    } catch {}
    for (let i = 0; i < 600 && record().code === undefined; i++) await sleep(50);
  }
}

/** A foreground call: stdout to the terminal and to the state folder; the CLI's exit status. */
function foreground(argv) {
  const id = nextId("call-");
  const out = join(STATE, `call-${id}.out`);
  writeFileSync(out, "");
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...argv], { stdio: ["inherit", "pipe", "inherit"] });
    child.stdout.on("data", (chunk) => {
      appendFileSync(out, chunk);
      process.stdout.write(chunk);
    });
    child.on("close", (code, signal) => {
      const status = code ?? (signal ? 128 : 1);
      writeRecord(join(STATE, `call-${id}.json`), { args: argv, code: status });
      resolve(status);
    });
  });
}

/** The keeper: a detached process that runs the command and notes its pid and exit status. */
function keep(id, argv) {
  const record = join(STATE, `bg-${id}.json`);
  const child = spawn(process.execPath, [CLI, ...argv], {
    stdio: ["ignore", openSync(join(STATE, `bg-${id}.out`), "a"), openSync(join(STATE, `bg-${id}.err`), "a")],
  });
  writeRecord(record, { args: argv, pid: child.pid });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("close", (code, signal) => {
    writeRecord(record, { args: argv, pid: child.pid, code, signal });
    process.exit(0);
  });
}

async function background(argv, ready) {
  if (ready === "index") {
    const status = await foreground([...argv, "--once"]);
    if (status !== 0) return status;
    ready = undefined;
  }
  const id = nextId("bg-");
  spawn(process.execPath, [process.argv[1], ...argv], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, DOCS_TEST_KEEP: String(id) },
  }).unref();
  const record = join(STATE, `bg-${id}.json`);
  const read = (name) => {
    try {
      return readFileSync(join(STATE, name), "utf8");
    } catch {
      return "";
    }
  };
  // A safety net only (the test stops long before): a command that never gets ready fails the block.
  for (let i = 0; i < 1200; i++) {
    await sleep(100);
    const state = read(`bg-${id}.json`);
    const output = read(`bg-${id}.out`) + read(`bg-${id}.err`);
    if (state && JSON.parse(state).code !== undefined) {
      process.stderr.write(output);
      process.stderr.write(`docs-test: chainmail ${argv.join(" ")} ended before it was ready\n`);
      return 1;
    }
    if (state && (ready === undefined || ready.test(output))) return 0;
  }
  process.stderr.write(`docs-test: chainmail ${argv.join(" ")} did not get ready (${record})\n`);
  return 1;
}

if (!CLI || !STATE) {
  process.stderr.write("docs-shim: DOCS_TEST_CLI and DOCS_TEST_STATE must be set\n");
  process.exit(2);
}
if (process.env.DOCS_TEST_KEEP) {
  keep(process.env.DOCS_TEST_KEEP, args);
} else {
  const ready = readiness(args);
  await stopSameCommand(args);
  process.exitCode = ready === undefined ? await foreground(args) : await background(args, ready);
}
