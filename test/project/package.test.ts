/**
 * What the published package promises about itself: every package an install pulls supports the Node versions
 * chainmail's `engines` declares (checked from the lockfile, runtime packages only), the licence is stated
 * everywhere a user looks (LICENSE in the tarball, package.json, the OpenAPI document), and the tarballs `npm pack`
 * makes (chainmail's and the two workflow packages') carry no install-time script and no source map naming a file
 * they lack. The tarballs are packed from the built tree (`npm run build` first; `npm test` does it).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../src/server/index.js";
import { testConfig } from "../support/helpers.js";
import { call } from "../support/server-helpers.js";

const root = join(import.meta.dirname, "..", "..");
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

/** Scripts npm runs when a package is installed: a tarball carrying one makes npm warn ("install scripts"). */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"];

/**
 * What in an unpacked package points at a file it lacks: a source map's `sources` entry without its text
 * (`sourcesContent`), or a `sourceMappingURL` comment naming a map that is not there.
 */
function danglingSourceMaps(packageDir: string): string[] {
  const files = readdirSync(packageDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
  const problems: string[] = [];
  for (const file of files) {
    const name = relative(packageDir, file);
    if (file.endsWith(".map")) {
      const map = JSON.parse(readFileSync(file, "utf8")) as {
        sources?: string[];
        sourceRoot?: string;
        sourcesContent?: (string | null)[];
      };
      for (const [i, source] of (map.sources ?? []).entries()) {
        const carried = typeof map.sourcesContent?.[i] === "string";
        if (!carried && !existsSync(join(dirname(file), map.sourceRoot ?? "", source))) {
          problems.push(`${name} names ${source}`);
        }
      }
    } else if (/\.[cm]?js$/.test(file)) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(file, "utf8"))?.[1];
      if (url && !url.startsWith("data:") && !existsSync(join(dirname(file), url))) {
        problems.push(`${name} points at ${url}`);
      }
    }
  }
  return problems;
}

describe("the packed tarballs", () => {
  const run = promisify(execFile);
  const folders: Record<string, string> = {
    chainmail: root,
    "node-red-contrib-chainmail": join(root, "packages", "node-red-contrib-chainmail"),
    "n8n-nodes-chainmail": join(root, "packages", "n8n-nodes-chainmail"),
  };
  const work = mkdtempSync(join(tmpdir(), "chainmail-packed-"));
  /** Each package's unpacked tarball (its `package/` folder). */
  const unpacked: Record<string, string> = {};

  beforeAll(async () => {
    for (const [name, folder] of Object.entries(folders)) {
      const into = join(work, name);
      mkdirSync(into);
      // The built tree as it is (no build again): what `npm pack` puts in after its prepack build.
      const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", into], {
        cwd: folder,
      });
      const tarball = join(into, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
      await run("tar", ["-xzf", tarball, "-C", into]);
      unpacked[name] = join(into, "package");
    }
  }, 120_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it.each(Object.keys(folders))(
    "%s: its package.json has no install-time script (nothing for npm to warn of)",
    (name) => {
      const manifest = JSON.parse(readFileSync(join(unpacked[name]!, "package.json"), "utf8"));
      expect(INSTALL_SCRIPTS.filter((script) => Object.hasOwn(manifest.scripts ?? {}, script))).toEqual([]);
    },
  );

  it.each(Object.keys(folders))("%s: carries its built code, and no source map naming a file it lacks", (name) => {
    const entry =
      name === "chainmail"
        ? "dist/index.js"
        : name.startsWith("node-red")
          ? "dist/chainmail.js"
          : "dist/shared/chainmail.js";
    expect(existsSync(join(unpacked[name]!, entry)), `${entry}: run npm run build first`).toBe(true);
    expect(danglingSourceMaps(unpacked[name]!)).toEqual([]);
  });

  it("would see a map whose sources are not shipped, and code pointing at a missing map", () => {
    const fake = join(work, "fake");
    mkdirSync(join(fake, "dist"), { recursive: true });
    writeFileSync(join(fake, "dist", "a.js"), "export {};\n//# sourceMappingURL=a.js.map");
    writeFileSync(join(fake, "dist", "a.js.map"), JSON.stringify({ version: 3, sources: ["../src/a.ts"] }));
    writeFileSync(join(fake, "dist", "b.js"), "export {};\n//# sourceMappingURL=b.js.map\n");
    writeFileSync(join(fake, "dist", "c.js.map"), JSON.stringify({ sources: ["../src/c.ts"], sourcesContent: ["x"] }));
    expect(danglingSourceMaps(fake).sort()).toEqual([
      "dist/a.js.map names ../src/a.ts",
      "dist/b.js points at b.js.map",
    ]);
  });
});
