/**
 * `chainmail demo` needs viem, anvil and Seaport's SDK, which `npm install chainmail` does not bring (optional
 * peers): what it says when they are missing. (The installed tarball's `chainmail demo` is test/install/.)
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEMO_PACKAGES, demoInstallMessage, missingDemoPackages } from "../../src/demo/requirements.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

describe("the demo's packages", () => {
  it("are optional peers and development dependencies, never runtime dependencies", () => {
    for (const name of DEMO_PACKAGES) {
      expect(pkg.dependencies[name]).toBeUndefined();
      expect(pkg.peerDependencies[name]).toBe(pkg.devDependencies[name]);
      expect(pkg.peerDependenciesMeta[name]).toEqual({ optional: true });
    }
  });

  it("are all found in this repository, so `npm start` runs", () => {
    expect(missingDemoPackages()).toEqual([]);
  });

  it("when missing, are named with the command that installs exactly those", () => {
    const missing = missingDemoPackages((name) => name === "@foundry-rs/anvil");
    expect(missing).toEqual([
      `viem@${pkg.peerDependencies.viem}`,
      `@opensea/seaport-js@${pkg.peerDependencies["@opensea/seaport-js"]}`,
    ]);
    const message = demoInstallMessage(missing);
    expect(message).toContain("needs viem, @opensea/seaport-js, not installed with chainmail");
    expect(message.endsWith(`\n  npm install ${missing.join(" ")}`)).toBe(true);
    expect(demoInstallMessage(missing.slice(0, 1))).toContain("Install it where chainmail is installed");
  });
});
