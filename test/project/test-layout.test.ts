/**
 * The tests mirror src/: a module with logic of its own has a test of its own at the same path under test/
 * (`<module>.test.ts`, or `<module>.<aspect>.test.ts` such as `.props.test.ts`), so whoever changes a module finds
 * its test where the module is. "Logic" is counted, not judged: three or more branches (if, loops, switch, try,
 * `?:`); below that a module declares (types, schemas, definitions, a folder's face) and is tested where it is used.
 * The few modules with logic that are tested through another file are listed below with that file, and the list is
 * kept exact: a module that gets a test of its own, loses its logic or is gone must leave it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..", "..");
/** Branches from which a module counts as having logic. */
const LOGIC = 3;

/** Modules with logic tested through another file: the file, and why there. */
const TESTED_THROUGH: Record<string, { test: string; why: string }> = {
  "cli/main.ts": { test: "test/cli/commands/run.test.ts", why: "the entry point every command's test runs" },
  "cli/commands/demo.ts": { test: "test/demo/demo.test.ts", why: "`chainmail demo` is the demo run whole" },
  "core/upstream-definition.ts": {
    test: "test/project/upstream-definitions.test.ts",
    why: "a definition is checked against every place that offers it",
  },
  "db/postgres.ts": {
    test: "test/services/db.pg.test.ts",
    why: "the database contract's tests, run against PostgreSQL where it is (test/services)",
  },
  "demo/activity.ts": { test: "test/ingest/demo.test.ts", why: "the demo's activity is what the index must read" },
  "demo/contracts.ts": { test: "test/ingest/demo.test.ts", why: "deployed on anvil by the demo's index test" },
  "mail/api.ts": { test: "test/cli/commands/mail.test.ts", why: "what `chainmail mail` runs" },
  "server/index.ts": { test: "test/cli/commands/serve.test.ts", why: "startServer is `chainmail serve`" },
  "server/mail-routes.ts": { test: "test/mail/service.test.ts", why: "the mail service's routes, through the service" },
  "server/openapi-parts.ts": { test: "test/server/openapi.test.ts", why: "parts of the one OpenAPI document" },
  "server/unsubscribe-routes.ts": {
    test: "test/mail/unsubscribe.test.ts",
    why: "one-click unsubscribe, from the link in a mail to the suppression",
  },
  "transports/mailjet/definition.ts": {
    test: "test/project/upstream-definitions.test.ts",
    why: "a definition is checked against every place that offers it",
  },
  "workflow/index.ts": {
    test: "test/project/workflow-kit.test.ts",
    why: "the workflow packages' face (test/workflow runs only inside Node-RED and n8n)",
  },
};

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path, suffix);
    return entry.name.endsWith(suffix) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Branch points in a module's code. */
function branches(path: string): number {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  let count = 0;
  const visit = (node: ts.Node) => {
    if (
      ts.isIfStatement(node) ||
      ts.isIterationStatement(node, false) ||
      ts.isSwitchStatement(node) ||
      ts.isTryStatement(node) ||
      ts.isConditionalExpression(node)
    ) {
      count++;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return count;
}

const modules = files(join(ROOT, "src"), ".ts").map((path) => relative(join(ROOT, "src"), path));
const tests = new Set(files(join(ROOT, "test"), ".test.ts").map((path) => relative(join(ROOT, "test"), path)));
/** Whether `module` (`area/name.ts`) has a test of its own: `area/name.test.ts` or `area/name.<aspect>.test.ts`. */
const hasOwnTest = (module: string) => {
  const base = module.replace(/\.ts$/, "");
  return [...tests].some((t) => t === `${base}.test.ts` || (t.startsWith(`${base}.`) && t.endsWith(".test.ts")));
};

describe("the tests' layout", () => {
  it("gives every module with logic a test of its own at its path, or names the test it has", () => {
    const missing = modules.filter((m) => branches(join(ROOT, "src", m)) >= LOGIC && !hasOwnTest(m));
    expect(missing.filter((m) => !Object.hasOwn(TESTED_THROUGH, m))).toEqual([]);
  });

  it("keeps the list of modules tested through another file exact, and each named test there", () => {
    for (const [module, { test }] of Object.entries(TESTED_THROUGH)) {
      const path = join(ROOT, "src", module);
      expect(existsSync(path), `${module} is gone`).toBe(true);
      expect(hasOwnTest(module), `${module} has a test of its own now`).toBe(false);
      expect(branches(path), `${module} has no logic to speak of now`).toBeGreaterThanOrEqual(LOGIC);
      expect(existsSync(join(ROOT, test)), `${test} is gone`).toBe(true);
    }
  });

  it("counts branches as logic (a check of the counter itself)", () => {
    expect(branches(join(ROOT, "src", "chain", "tokens.ts"))).toBe(0);
    expect(branches(join(ROOT, "src", "chain", "pacer.ts"))).toBeGreaterThan(20);
  });
});
