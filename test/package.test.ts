/**
 * What the published package promises about itself: every package an install pulls supports the Node versions
 * chainmail's `engines` declares (checked from the lockfile, runtime packages only), and the licence is stated
 * everywhere a user looks (LICENSE in the tarball, package.json, the OpenAPI document).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "../src/server/index.js";
import { testConfig } from "./helpers.js";
import { call } from "./server-helpers.js";

const root = join(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
// semver comes with fastify (a runtime dependency); it ships no types of its own.
const semver = createRequire(import.meta.url)("semver") as {
  subset(sub: string, sup: string): boolean;
  validRange(range: string): string | null;
};

interface LockEntry {
  version?: string;
  dev?: boolean;
  engines?: Record<string, string> | string[];
}

/** The packages `npm install chainmail` brings, as the lockfile records them, with the Node range each declares. */
function runtimeEngines(packages: Record<string, LockEntry>): { name: string; node: string }[] {
  return Object.entries(packages)
    .filter(([path, entry]) => path !== "" && !entry.dev)
    .flatMap(([path, entry]) => {
      // Some old packages write engines as an array ("node >= 0.8"): the Node part is what counts.
      const engines = entry.engines;
      const node = Array.isArray(engines)
        ? engines.find((e) => e.startsWith("node"))?.replace(/^node\s*/, "")
        : engines?.node;
      return node ? [{ name: `${path.replace(/^.*node_modules\//, "")}@${entry.version}`, node }] : [];
    });
}

/** The packages whose declared Node range leaves out some version chainmail's range admits. */
function unsupported(ours: string, packages: { name: string; node: string }[]): string[] {
  return packages.filter((p) => !semver.subset(ours, p.node)).map((p) => `${p.name} needs Node ${p.node}`);
}

describe("engines", () => {
  const ours: string = pkg.engines.node;

  it("is a range npm understands", () => {
    expect(semver.validRange(ours)).not.toBeNull();
  });

  it("is supported by every package an install pulls (runtime packages of the lockfile)", () => {
    const packages = runtimeEngines(lock.packages);
    // The lockfile does record engines, and the runtime tree is there: an empty list would prove nothing.
    expect(packages.map((p) => p.name.replace(/@[^@]+$/, ""))).toEqual(
      expect.arrayContaining(["undici", "commander", "nodemailer"]),
    );
    expect(unsupported(ours, packages)).toEqual([]);
  });

  it("leaves dev-only packages out, and would catch a package that needs a newer Node", () => {
    const fake: Record<string, LockEntry> = {
      "": {},
      "node_modules/needs-22": { version: "3.0.0", engines: { node: ">=22" } },
      "node_modules/old-style": { version: "1.0.0", engines: ["node >= 0.8"] },
      "node_modules/dev-only": { version: "1.0.0", dev: true, engines: { node: ">=26" } },
    };
    expect(unsupported(ours, runtimeEngines(fake))).toEqual(["needs-22@3.0.0 needs Node >=22"]);
  });
});

describe("licence", () => {
  it("is MIT in LICENSE, package.json and the files the tarball carries", () => {
    expect(pkg.license).toBe("MIT");
    expect(pkg.files).toContain("LICENSE");
    const text = readFileSync(join(root, "LICENSE"), "utf8");
    expect(text).toMatch(/^MIT License\n\nCopyright \(c\) 2026 chainmail contributors\n/);
    expect(text).toContain('THE SOFTWARE IS PROVIDED "AS IS"');
  });

  it("is in the OpenAPI document's info", async () => {
    const server = await startServer({ port: 0, config: testConfig() });
    try {
      const doc = (await call(`${server.url}/openapi.json`, "GET")).body;
      expect(doc.info.license).toEqual({ name: "MIT", identifier: "MIT" });
    } finally {
      await server.close();
    }
  });
});
