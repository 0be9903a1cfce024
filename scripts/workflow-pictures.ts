/**
 * The pictures of a flow in the packages' READMEs: the Node-RED editor with the package's example flow, and n8n's
 * canvas with a trigger-to-email workflow, each running headless under Node 24 from the runtimes cache and
 * photographed by Debian's chromium (playwright-core). Offline: both editors are served from loopback.
 *   eval "$(scripts/ci/runtimes.sh)" && export NODE24 NODE_RED N8N N8N_USER_SEED && npx tsx scripts/workflow-pictures.ts
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startNftport, VALID_KEY } from "../test/upstreams/nftport.js";
import { standardDataset } from "../test/upstreams/nftport-data.js";
import { exec, installTarball, node24Env, pack, ROOT, runtime, start } from "../test/workflow/runtimes.js";

// The local NFTPort-compatible server, so the activity node's status shows a poll that worked.
const nftport = await startNftport(standardDataset());

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1280, height: 560 }, deviceScaleFactor: 1 });

async function nodeRed() {
  const userDir = mkdtempSync(join(tmpdir(), "chainmail-picture-node-red-"));
  writeFileSync(join(userDir, "package.json"), '{"name":"pictures","private":true}');
  writeFileSync(
    join(userDir, "settings.js"),
    `module.exports = { flowFile: "flows.json", credentialSecret: "pictures", editorTheme: { tours: false }, telemetry: { enabled: false } };`,
  );
  const examples = join(ROOT, "packages", "node-red-contrib-chainmail", "examples");
  const flow = readFileSync(join(examples, "A token's history and new sales.json"), "utf8");
  writeFileSync(join(userDir, "flows.json"), flow);
  await installTarball(userDir, await pack("node-red-contrib-chainmail"), node24Env());
  const env = node24Env({ NFTPORT_BASE_URL: nftport.url, NFTPORT_API_KEY: VALID_KEY });
  const server = start(
    runtime("NODE_RED"),
    ["--userDir", userDir, "--port", "18931", "--settings", join(userDir, "settings.js")],
    env,
  );
  try {
    await server.waitFor(/Started flows/, 60_000);
    await page.goto("http://127.0.0.1:18931/");
    await page.waitForSelector("#red-ui-workspace-chart svg g.red-ui-flow-node", { timeout: 60_000 });
    await page.waitForTimeout(1500);
    // The flow alone: no sidebar (the explorer and palette stay out of the picture's frame).
    await page.keyboard.press("Control+Space");
    await page.waitForTimeout(3000);
    const chart = await page.locator("#red-ui-workspace-chart").boundingBox();
    if (!chart) throw new Error("no workspace in the Node-RED editor");
    const target = join(ROOT, "packages", "node-red-contrib-chainmail", "docs", "flow.png");
    mkdirSync(join(target, ".."), { recursive: true });
    await page.screenshot({ path: target, clip: { x: chart.x, y: chart.y, width: 700, height: 300 } });
  } finally {
    await server.stop();
    rmSync(userDir, { recursive: true, force: true });
  }
}

async function n8n() {
  const home = mkdtempSync(join(tmpdir(), "chainmail-picture-n8n-"));
  cpSync(runtime("N8N_USER_SEED"), join(home, "user"), { recursive: true });
  const env = node24Env({
    N8N_USER_FOLDER: join(home, "user"),
    N8N_DIAGNOSTICS_ENABLED: "false",
    // The key the seeded user folder was made with (scripts/ci/runtimes.sh).
    N8N_ENCRYPTION_KEY: "chainmail-ci-only",
    N8N_PORT: "18932",
    N8N_LISTEN_ADDRESS: "127.0.0.1",
    N8N_SECURE_COOKIE: "false",
    N8N_GRACEFUL_SHUTDOWN_TIMEOUT: "5",
  });
  const nodes = join(home, "user", ".n8n", "nodes");
  mkdirSync(nodes, { recursive: true });
  writeFileSync(join(nodes, "package.json"), '{"private":true}');
  await installTarball(nodes, await pack("n8n-nodes-chainmail"), env);
  const workflow = {
    id: "picture",
    name: "New sales, mailed",
    active: false,
    nodes: [
      {
        id: "t",
        name: "New sales",
        type: "n8n-nodes-chainmail.chainmailTrigger",
        typeVersion: 1,
        position: [0, 0],
        parameters: {
          source: "nftport",
          watch: "contract",
          contractAddress: "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
          types: ["sale"],
        },
        credentials: { chainmailNftPortApi: { id: "nftport", name: "NFTPort" } },
      },
      {
        id: "n",
        name: "Token history",
        type: "n8n-nodes-chainmail.chainmailNft",
        typeVersion: 1,
        position: [260, 0],
        parameters: {
          source: "nftport",
          operation: "getByToken",
          contractAddress: "={{ $json.nft.contract_address }}",
          nftId: "={{ $json.nft.token_id }}",
          returnAll: false,
          limit: 10,
        },
        credentials: { chainmailNftPortApi: { id: "nftport", name: "NFTPort" } },
      },
      {
        id: "e",
        name: "Mail the sale",
        type: "n8n-nodes-chainmail.chainmailEmail",
        typeVersion: 1,
        position: [520, 0],
        parameters: { messagesFrom: "json", request: '={{ { "Messages": [] } }}' },
        credentials: { chainmailMailjetApi: { id: "mailjet", name: "Mailjet" } },
      },
    ],
    connections: {
      "New sales": { main: [[{ node: "Token history", type: "main", index: 0 }]] },
      "Token history": { main: [[{ node: "Mail the sale", type: "main", index: 0 }]] },
    },
    settings: {},
  };
  const credentials = [
    { id: "nftport", name: "NFTPort", type: "chainmailNftPortApi", data: { apiKey: VALID_KEY, baseUrl: nftport.url } },
    { id: "mailjet", name: "Mailjet", type: "chainmailMailjetApi", data: { apiKey: "key", secretKey: "secret" } },
  ];
  writeFileSync(join(home, "credentials.json"), JSON.stringify(credentials));
  await exec(runtime("N8N"), ["import:credentials", `--input=${join(home, "credentials.json")}`], { env });
  writeFileSync(join(home, "workflow.json"), JSON.stringify(workflow));
  await exec(runtime("N8N"), ["import:workflow", `--input=${join(home, "workflow.json")}`], { env });
  const server = start(runtime("N8N"), ["start"], env);
  try {
    await server.waitFor(/Editor is now accessible/, 120_000);
    const base = "http://127.0.0.1:18932";
    const owner = {
      email: "pictures@example.com",
      firstName: "Chain",
      lastName: "Mail",
      password: "Pictures-0123456789",
    };
    const setup = await fetch(`${base}/rest/owner/setup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(owner),
    });
    const cookie = setup.headers.getSetCookie().find((c) => c.startsWith("n8n-auth="));
    if (!cookie) throw new Error(`no session from the owner setup: ${setup.status} ${await setup.text()}`);
    await page
      .context()
      .addCookies([{ name: "n8n-auth", value: cookie.split(";")[0]!.slice("n8n-auth=".length), url: base }]);
    await page.goto(`${base}/workflow/picture`);
    await page.waitForSelector("[data-test-id='canvas-node']", { timeout: 60_000 });
    await page.waitForTimeout(2500);
    await page.keyboard.press("Escape");
    const target = join(ROOT, "packages", "n8n-nodes-chainmail", "docs", "workflow.png");
    mkdirSync(join(target, ".."), { recursive: true });
    await page.screenshot({ path: target, clip: { x: 200, y: 150, width: 900, height: 300 } });
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

try {
  await nodeRed();
  await n8n();
} finally {
  await browser.close();
  await nftport.close();
}
