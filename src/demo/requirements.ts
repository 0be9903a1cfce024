/**
 * The demo's local chain needs packages that `npm install chainmail` does not bring (they are most of its weight):
 * viem, anvil and Seaport's SDK. They are optional peer dependencies (development dependencies in the repository,
 * so `npm start` there has them). Before the demo loads, this says exactly what to install when one is missing.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

export const DEMO_PACKAGES = ["viem", "@foundry-rs/anvil", "@opensea/seaport-js"] as const;

/** Whether `name` can be found from here (its package.json resolves even for a package without a main module). */
const installed = (name: string): boolean => {
  try {
    createRequire(import.meta.url).resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
};

/** The demo's packages that are not installed, each as `name@range` from chainmail's peer dependencies. */
export function missingDemoPackages(isInstalled: (name: string) => boolean = installed): string[] {
  // package.json sits two levels above this module in src/, dist/ and the bundled dist/cli/.
  const { peerDependencies } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  return DEMO_PACKAGES.filter((name) => !isInstalled(name)).map((name) => `${name}@${peerDependencies[name]}`);
}

/** The message `chainmail demo` ends with when packages are missing: what they are for, and the command. */
export function demoInstallMessage(missing: readonly string[]): string {
  const names = missing.map((spec) => spec.slice(0, spec.lastIndexOf("@")));
  return (
    `the demo runs a local Ethereum chain and needs ${names.join(", ")}, not installed with chainmail. ` +
    `Install ${missing.length > 1 ? "them" : "it"} where chainmail is installed:\n  npm install ${missing.join(" ")}`
  );
}
