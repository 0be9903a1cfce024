/**
 * `/docs` in a real browser: Debian's chromium, headless, through playwright-core. Loads the page, runs
 * nft-transactions-by-token from it ("Try it out" → Execute) against the local NFTPort server, sees the result.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { testConfig } from "../support/helpers.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_1155, HUGE_TOKEN, standardDataset } from "../upstreams/nftport-data.js";

const CHROMIUM = "/usr/bin/chromium";
const TOKEN = "browser-token-0123456789";

let upstream: NftportServer;
let server: RunningServer;
let browser: Browser;

// .ci/run installs chromium; a developer machine without it skips this file rather than failing.
describe.skipIf(!existsSync(CHROMIUM))("/docs in a browser", () => {
  beforeAll(async () => {
    upstream = await startNftport(standardDataset());
    server = await startServer({
      port: 0,
      config: testConfig({ NFTPORT_BASE_URL: upstream.url, NFTPORT_API_KEY: VALID_KEY, CHAINMAIL_TOKENS: TOKEN }),
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await upstream?.close();
  });

  it("authorizes, runs a node with Try it out → Execute and shows its output", async () => {
    const page = await browser.newPage();
    const offline: string[] = [];
    page.on("request", (req) => {
      if (!req.url().startsWith(server.url)) offline.push(req.url());
    });
    await page.goto(`${server.url}/docs`);
    await page.getByText("NFT transactions retriever", { exact: true }).waitFor();

    // The service requires a bearer token here (operator credentials are configured).
    await page.locator("button.authorize").first().click();
    // The dialog lists the bearer scheme first, then Basic (Mailjet's event callbacks): only the bearer is set.
    const bearer = page.locator(".auth-container").filter({ hasText: "Bearer" });
    await bearer.locator("input").first().fill(TOKEN);
    await bearer.locator(".auth-btn-wrapper button.authorize").click();
    await bearer.locator("button.btn-done").click();

    const op = page.locator("#operations-nodes-nft-transactions-by-token");
    await op.locator(".opblock-summary").click();
    await op.getByRole("button", { name: "Try it out" }).click();
    // No params: the operator's key is used.
    await op
      .locator("textarea.body-param__text")
      .fill(JSON.stringify({ query: { contract_address: CONTRACT_1155, token_id: HUGE_TOKEN, type: ["mint"] } }));
    const before = upstream.requests.length;
    await op.getByRole("button", { name: "Execute" }).click();

    const result = op.locator(".live-responses-table tr.response .response-col_status").first();
    await expect.poll(async () => (await result.textContent())?.trim(), { timeout: 15_000 }).toBe("200");
    const body = await op
      .locator(".live-responses-table tr.response .response-col_description pre")
      .first()
      .textContent();
    expect(body).toContain('"response": "OK"');
    expect(body).toContain(`"contract_address": "${CONTRACT_1155}"`);
    expect(upstream.requests.length).toBe(before + 1);
    expect(upstream.requests.at(-1)!.authorization).toBe(VALID_KEY);
    expect(offline).toEqual([]);
  }, 60_000);
});
