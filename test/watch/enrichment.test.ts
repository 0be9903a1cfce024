/**
 * Token details in `chainmail watch` mails, end to end: sales on a real anvil, the own index, a watch mailing to an
 * outbox; the NFT contract answers `tokenURI` and `name()` (fixed answers installed with anvil_setCode), the ENS
 * registry names the buyer, and the metadata comes from a server of our own on loopback (CHAINMAIL_FETCH_PRIVATE=true,
 * as for a local chain). The default templates show the image and the names, and read as text; a template of one's
 * own uses the variables; a silent metadata host leaves them empty and the mail goes on time.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENS_REGISTRY } from "../../src/enrichment/chain-reads.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { previewWatch, watch } from "../../src/watch/watch.js";
import {
  abiAddressAnswer,
  abiStringAnswer,
  fixedAnswers,
  type MetadataServer,
  SELECTORS,
  startMetadataServer,
} from "../support/enrichment-helpers.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, address, installEmitters, startAnvil } from "../support/index-helpers.js";
import { BUYER, captureLogger, NFT, SEAPORT, sell } from "../support/watch-helpers.js";

const RESOLVER = address(0xe25);

let anvil: Anvil;
let backend: IndexBackend;
let server: MetadataServer;

/** The NFT contract answers tokenURI with `uri` and name() with "Loopback Cats". */
const nftAnswers = (uri: string) =>
  anvil.rpc("anvil_setCode", [
    NFT,
    fixedAnswers({ [SELECTORS.tokenURI]: abiStringAnswer(uri), [SELECTORS.name]: abiStringAnswer("Loopback Cats") }),
  ]);

beforeAll(async () => {
  backend = await openBackend("watch-enrichment");
  anvil = await startAnvil();
  server = await startMetadataServer();
  await installEmitters(anvil, [SEAPORT]);
  await anvil.rpc("anvil_setCode", [ENS_REGISTRY, fixedAnswers({ [SELECTORS.resolver]: abiAddressAnswer(RESOLVER) })]);
  await anvil.rpc("anvil_setCode", [
    RESOLVER,
    fixedAnswers({ [SELECTORS.ensName]: abiStringAnswer("bob.eth"), [SELECTORS.addr]: abiAddressAnswer(BUYER) }),
  ]);
});

afterAll(async () => {
  await closeIndexSources();
  await server?.close();
  await anvil?.stop();
  await backend?.close();
});

async function setup(name: string, rules: unknown[], extra: Record<string, string> = {}) {
  const db = await backend.target(name);
  const outbox = join(backend.dir, `${name}-outbox`);
  const env = {
    NFT_SOURCE: "index",
    INDEX_DB: db,
    INDEX_RPC_URL: anvil.rpcUrl,
    EMAIL_TRANSPORT: "outbox",
    OUTBOX_DIR: outbox,
    CHAINMAIL_RETRY_BASE_MS: "10",
    CHAINMAIL_FETCH_PRIVATE: "true",
    CHAINMAIL_IPFS_GATEWAY: "https://gateway.example/ipfs/",
    ...extra,
  };
  const config = { from: { Email: "watch@chainmail.test" }, reorg_depth: 6, rules };
  const logger = captureLogger();
  const step = async () => {
    await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, seaport: [SEAPORT] });
    return watch({ config, env, once: true, logger });
  };
  const mails = async () =>
    Promise.all(
      (await listOutbox(outbox)).map(async (m) => ({
        subject: m.subject,
        parsed: await simpleParser(await readFile(join(outbox, m.file))),
      })),
    );
  return { env, config, logger, step, mails };
}

const saleRule = (id: string, mail: Record<string, unknown> = {}) => ({
  id,
  contract_address: NFT,
  type: ["sale"],
  mail: { to: [{ Email: "collector@example.com" }], ...mail },
});

describe("token details in watch mails", () => {
  it("the default templates show the token's name and image, the collection and the buyer's ENS name", async () => {
    await nftAnswers(`${server.url}/token/5.json`);
    const w = await setup("defaults", [saleRule("cats")]);
    await w.step();
    await sell(anvil, 5, 1500);
    expect((await w.step()).sent).toBe(1);
    const [mail] = await w.mails();
    const text = mail!.parsed.text ?? "";
    expect(text).toContain("Name: Loopback Cat #5\n");
    expect(text).toContain("Collection: Loopback Cats\n");
    expect(text).toContain(`To: bob.eth (${BUYER})\n`);
    expect(text).toContain("Image: https://gateway.example/ipfs/bafy5/image.png\n");
    const html = String(mail!.parsed.html);
    expect(html).toContain('<img src="https://gateway.example/ipfs/bafy5/image.png" alt="Loopback Cat #5"');
    expect(html).toContain("<li>Name: Loopback Cat #5</li>");
    expect(html).toContain(`<li>To: bob.eth (${BUYER})</li>`);
    // The record itself is as it was: the subject's summary is the same as without details.
    expect(mail!.subject).toContain("#5 for 1.5 ETH");
  });

  it("a template of one's own uses token_name, token_image, collection_name, from_name and to_name", async () => {
    await nftAnswers(`${server.url}/token/6.json`);
    const w = await setup("own", [
      saleRule("own", {
        subject: '{{var:token_name:"a token"}} sold to {{var:to_name:"someone"}}',
        text: '{{var:collection_name}}|{{var:token_image}}|{{var:from_name:"no name"}}|{{var:to_name}}',
      }),
    ]);
    await w.step();
    await sell(anvil, 6, 2000);
    expect((await w.step()).sent).toBe(1);
    const [mail] = await w.mails();
    expect(mail!.subject).toBe("Loopback Cat #6 sold to bob.eth");
    expect(mail!.parsed.text?.trim()).toBe(
      "Loopback Cats|https://gateway.example/ipfs/bafy6/image.png|no name|bob.eth",
    );
    // The dry run shows the same details, writing nothing (the contract's fixed answer names token 16 now).
    await nftAnswers(`${server.url}/token/16.json`);
    await sell(anvil, 16, 2000);
    await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: w.env.INDEX_DB, follow: false, seaport: [SEAPORT] });
    const preview = await previewWatch({ config: w.config, env: w.env });
    expect(preview.map((p) => p.message.Subject)).toEqual(["Loopback Cat #16 sold to bob.eth"]);
  });

  it("a silent metadata host leaves the token's values empty and the mail goes within the budget", async () => {
    await nftAnswers(`${server.url}/silent.json`);
    const w = await setup("silent", [saleRule("silent")], { CHAINMAIL_ENRICH_BUDGET_MS: "600" });
    await w.step();
    await sell(anvil, 7, 1000);
    const started = Date.now();
    expect((await w.step()).sent).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    const [mail] = await w.mails();
    const text = mail!.parsed.text ?? "";
    expect(text).not.toContain("Name:");
    expect(text).toContain("Collection: Loopback Cats\n");
    expect(String(mail!.parsed.html)).not.toContain("<img");
    expect(w.logger.lines.some((l) => l.msg.includes("token details could not be read"))).toBe(true);
  });

  it("with private targets refused (the default), a loopback metadata host gives nothing and the mail still goes", async () => {
    await nftAnswers(`${server.url}/token/8.json`);
    const w = await setup("refused", [saleRule("refused")], { CHAINMAIL_FETCH_PRIVATE: "false" });
    await w.step();
    const asked = server.asked.length;
    await sell(anvil, 8, 1000);
    expect((await w.step()).sent).toBe(1);
    expect(server.asked.length).toBe(asked);
    const [mail] = await w.mails();
    expect(mail!.parsed.text).not.toContain("Name:");
    expect(mail!.parsed.text).toContain("To: bob.eth");
  });

  it("CHAINMAIL_ENRICH=false: no details, no calls for them", async () => {
    await nftAnswers(`${server.url}/token/9.json`);
    const w = await setup("off", [saleRule("off")], { CHAINMAIL_ENRICH: "false" });
    await w.step();
    const asked = server.asked.length;
    await sell(anvil, 9, 1000);
    expect((await w.step()).sent).toBe(1);
    expect(server.asked.length).toBe(asked);
    const [mail] = await w.mails();
    expect(mail!.parsed.text).not.toMatch(/Name:|Collection:|bob\.eth/);
  });
});
