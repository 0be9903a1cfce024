/**
 * Command line habits: `--version`, and a misspelt flag anywhere (any command, any flag, any one-letter slip) named
 * as unknown with the closest known flag suggested, then one line pointing at that command's `--help` instead of
 * the whole help, exit 2. Property-based over every flag of every command (in process), and real processes for
 * the exit statuses.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Command, CommanderError } from "commander";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { runCli } from "../support/helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);
const VERSION = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8")).version;

/** Every command with the words that reach it, and its long flags (help included). */
function commands(command: Command, path: string[] = []): { path: string[]; flags: string[] }[] {
  const here = [...path, command.name()];
  const flags = [...command.options.map((o) => o.long), "--help"].filter((f): f is string => Boolean(f));
  return [{ path: here, flags }, ...command.commands.flatMap((sub) => commands(sub, here))];
}

/** The flag with one slip of the finger: a letter dropped, doubled, swapped with the next, or replaced. */
const slip = (flag: string) => {
  const word = flag.slice(2);
  return fc
    .tuple(
      fc.constantFrom("drop", "double", "swap", "replace"),
      fc.nat(word.length - 1),
      fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz"),
    )
    .map(([kind, at, letter]) => {
      const i = kind === "swap" ? Math.min(at, word.length - 2) : at;
      const typo =
        kind === "drop"
          ? word.slice(0, i) + word.slice(i + 1)
          : kind === "double"
            ? word.slice(0, i + 1) + word.slice(i)
            : kind === "swap"
              ? word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2)
              : word.slice(0, i) + letter + word.slice(i + 1);
      return `--${typo}`;
    });
};

describe("a misspelt flag", () => {
  const all = commands(buildProgram()).filter((c) => c.flags.length);
  const cases = fc
    .constantFrom(...all)
    .chain((c) =>
      fc
        .constantFrom(...c.flags.filter((f) => f.length >= 5))
        .chain((flag) => slip(flag).map((typo) => ({ ...c, flag, typo }))),
    )
    .filter((c) => !c.flags.includes(c.typo) && c.typo.length > 3);

  it("is named as unknown, the closest flag suggested, then one line naming the command's --help", async () => {
    await fc.assert(
      fc.asyncProperty(cases, async ({ path, flag, typo }) => {
        const program = buildProgram();
        let errors = "";
        const capture = (command: Command) => {
          const keep = (text: string) => {
            errors += text;
          };
          command.configureOutput({ writeErr: keep, writeOut: keep });
          command.commands.forEach(capture);
        };
        capture(program);
        const thrown = await program.parseAsync([...path.slice(1), typo], { from: "user" }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(thrown).toBeInstanceOf(CommanderError);
        expect((thrown as CommanderError).exitCode).not.toBe(0);
        const lines = errors.trimEnd().split("\n");
        expect(lines[0]).toBe(`error: unknown option '${typo}'`);
        expect(lines[1]).toMatch(/^\(Did you mean (one of )?(--[a-z-]+(, )?)+\?\)$/);
        expect(lines[1]).toContain(flag);
        expect(lines.slice(2)).toEqual([`See: ${path.join(" ")} --help`]);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it.each([
    [["run", "nft-transactions-by-token", "--inptu", "{}"], "--inptu", "--input", "chainmail run"],
    [["watch", "--confg", "w.json"], "--confg", "--config", "chainmail watch"],
    [["index", "migrate", "--form", "a", "--to", "b"], "--form", "--from", "chainmail index migrate"],
  ])("%j exits 2 with the suggestion and the hint, nothing more", async (args, typo, flag, command) => {
    const out = await runCli(args);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr).toBe(`error: unknown option '${typo}'\n(Did you mean ${flag}?)\nSee: ${command} --help\n`);
  });
});

describe("chainmail --version", () => {
  it.each(["--version", "-V"])("%s prints the package version, exit 0", async (flag) => {
    const out = await runCli([flag]);
    expect(out).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
  });
});
