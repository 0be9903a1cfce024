/**
 * One set of local upstreams for every documented block: NFTPort, OpenSea, Mailjet, SMTP, an anvil chain with the
 * demo's contracts and activity, and an own index of it. Each document gets a working folder of its own, set up as
 * a user's would be after the quick start: `chainmail` installed (the built CLI, `npx chainmail` too) and an index
 * at ./data/index.sqlite.
 */
import { execFile } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createActivity } from "../../src/demo/activity.js";
import { deployAll } from "../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../src/demo/devchain.js";
import { API_KEY as MAILJET_KEY, SECRET_KEY as MAILJET_SECRET, startMailjet } from "../upstreams/mailjet.js";
import { VALID_KEY as NFTPORT_KEY, startNftport } from "../upstreams/nftport.js";
import { standardDataset } from "../upstreams/nftport-data.js";
import { OPENSEA_KEY, startOpenSea } from "../upstreams/opensea.js";
import { openseaDataset } from "../upstreams/opensea-data.js";
import { SMTP_PASSWORD, SMTP_USER, startSmtp } from "../upstreams/smtp.js";
import { scratchDatabase } from "./index-backend.js";

const run = promisify(execFile);
export const REPO = join(import.meta.dirname, "..", "..");
export const CLI = join(REPO, "dist", "cli", "main.js");
const SHIM = join(import.meta.dirname, "docs-shim.mjs");

/**
 * The values a user fills in, as the docs write them (`YOUR_…`), and what the tests fill in: the local upstreams'
 * keys. Written anywhere in a block, they are replaced before it runs.
 */
export const USER_VALUES = {
  YOUR_NFTPORT_KEY: NFTPORT_KEY,
  YOUR_OPENSEA_KEY: OPENSEA_KEY,
  YOUR_MAILJET_API_KEY: MAILJET_KEY,
  YOUR_MAILJET_SECRET_KEY: MAILJET_SECRET,
} as const;

export interface DocsWorld {
  /** `{name}` placeholders of `env` and `replace` markers. */
  placeholders: Record<string, string>;
  /** The environment every block starts from. */
  env: Record<string, string>;
  /** A fresh PostgreSQL database for one block (`{postgres}`). */
  scratchPostgres(): Promise<{ url: string; drop(): Promise<void> }>;
  /** A PostgreSQL database holding the index every document starts with (`{postgres_index}`), shared. */
  postgresIndex(): Promise<string>;
  /** A fresh working folder for one document. */
  workdir(name: string): string;
  close(): Promise<void>;
}

/** Kills the background commands (the shim's `<document>/.docs-test/<block>/bg-N.json`) that have not ended. */
function stopLeftovers(root: string) {
  const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
  for (const doc of list(root)) {
    for (const block of list(join(root, doc, ".docs-test"))) {
      const dir = join(root, doc, ".docs-test", block);
      for (const file of list(dir).filter((f) => /^bg-\d+\.json$/.test(f))) {
        try {
          const record = JSON.parse(readFileSync(join(dir, file), "utf8")) as { pid: number; code?: number | null };
          if (record.code === undefined) process.kill(record.pid, "SIGKILL");
        } catch {
          // Gone already, or its record half written: nothing to stop.
        }
      }
    }
  }
}

export async function startDocsWorld(): Promise<DocsWorld> {
  const root = mkdtempSync(join(tmpdir(), "chainmail-docs-"));
  const closers: (() => Promise<unknown>)[] = [
    async () => rmSync(root, { recursive: true, force: true }),
    // A block that did not end normally may have left a background command running: stop it.
    async () => stopLeftovers(root),
  ];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const [nftport, opensea, mailjet, smtp, chain] = await Promise.all([
      startNftport(standardDataset()),
      startOpenSea(openseaDataset()),
      startMailjet(),
      startSmtp({ authRequired: true }),
      startAnvil(),
    ]);
    closers.push(
      () => nftport.close(),
      () => opensea.close(),
      () => mailjet.close(),
      () => smtp.close(),
      () => (chain as DevChain).stop(),
    );
    const deployed = await deployAll(chain.rpcUrl);
    await createActivity(chain.rpcUrl, deployed);

    // `chainmail` on PATH (and for `npx chainmail`, in a project's node_modules/.bin): the built CLI behind a shim
    // that starts long-running commands in the background (docs-shim.mjs).
    const bin = join(root, "bin");
    mkdirSync(bin);
    copyFileSync(SHIM, join(bin, "chainmail"));
    chmodSync(join(bin, "chainmail"), 0o755);

    // The index every document starts with, as `chainmail index` builds it from the chain.
    const template = join(root, "template");
    mkdirSync(join(template, "data"), { recursive: true });
    await run(process.execPath, [CLI, "index", "--rpc", chain.rpcUrl, "--db", "./data/index.sqlite", "--once"], {
      cwd: template,
      env: { PATH: process.env.PATH ?? "" },
    });

    let docs = 0;
    const workdir = (name: string) => {
      const dir = join(root, `${++docs}-${name.replace(/[^\w.-]+/g, "_")}`);
      mkdirSync(join(dir, "data"), { recursive: true });
      mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
      writeFileSync(join(dir, "package.json"), '{ "name": "docs-test", "private": true, "type": "module" }\n');
      symlinkSync(REPO, join(dir, "node_modules", "chainmail"), "dir");
      symlinkSync(join(bin, "chainmail"), join(dir, "node_modules", ".bin", "chainmail"));
      copyFileSync(join(template, "data", "index.sqlite"), join(dir, "data", "index.sqlite"));
      return dir;
    };

    const placeholders: Record<string, string> = {
      nftport: nftport.url,
      opensea: opensea.url,
      mailjet: mailjet.url,
      rpc: chain.rpcUrl,
      smtp: smtp.url({ user: SMTP_USER, pass: SMTP_PASSWORD }),
      ...USER_VALUES,
    };
    const env: Record<string, string> = {
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      HOME: process.env.HOME ?? root,
      LANG: "C.UTF-8",
      NFTPORT_BASE_URL: nftport.url,
      OPENSEA_BASE_URL: opensea.url,
      MAILJET_BASE_URL: mailjet.url,
      CHAINMAIL_RETRY_BASE_MS: "20",
      DOCS_TEST_CLI: CLI,
      npm_config_update_notifier: "false",
      npm_config_offline: "true",
    };
    let postgresIndex: Promise<string> | undefined;
    const copyIndexToPostgres = async () => {
      const db = await scratchDatabase("chainmail_docs");
      closers.push(() => db.drop());
      await run(process.execPath, [CLI, "index", "migrate", "--from", "./data/index.sqlite", "--to", db.url], {
        cwd: template,
        env: { PATH: process.env.PATH ?? "" },
      });
      return db.url;
    };
    return {
      placeholders,
      env,
      scratchPostgres: () => scratchDatabase("chainmail_docs"),
      postgresIndex: () => {
        postgresIndex ??= copyIndexToPostgres();
        return postgresIndex;
      },
      workdir,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
