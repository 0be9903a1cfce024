/**
 * node-red-contrib-chainmail in a real headless Node-RED 5 under Node 24: the packed tarball installed alone into
 * the user folder, flows deployed through the admin API, inputs injected through it, every output port wired to a
 * local sink that records what each port sent; the upstreams are the local NFTPort-, OpenSea- and Mailjet-compatible
 * servers and real chainmail services (one over NFTPort, one over its own index with OpenSea's order book, one
 * keeping the mail lifecycle: the delivery-events node and email-send's suppression lookup).
 */

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { testConfig } from "../support/helpers.js";
import { type MailjetServer, API_KEY as MJ_KEY, SECRET_KEY as MJ_SECRET, startMailjet } from "../upstreams/mailjet.js";
import { type NftportServer, type Rec, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_721, CONTRACT_1155, HUGE_TOKEN, standardDataset } from "../upstreams/nftport-data.js";
import { OPENSEA_KEY, type OpenSeaServer, startOpenSea } from "../upstreams/opensea.js";
import {
  BAYC,
  fixture,
  GLYPHBOTS,
  HUGE_QUANTITY,
  MULTI,
  HUGE_TOKEN as OPENSEA_HUGE_TOKEN,
  openseaDataset,
} from "../upstreams/opensea-data.js";
import { type IndexWithOpenSea, startIndexWithOpenSea } from "./index-with-opensea.js";
import { eventually, freePort, installTarball, node24Env, pack, type Running, runtime, start } from "./runtimes.js";

/** Each node type and its file (dist/nodes/<file>.js, its editor and catalogue beside it). */
const NODE_FILES = new Map(
  [
    "config",
    "nft-transactions-by-contract",
    "nft-transactions-on-chain",
    "nft-transactions-by-token",
    "email-send",
    "activity",
    "mail-events",
  ].map((file) => [`chainmail-${file}`, file]),
);
const SERVICE_TOKEN = "node-red-service-token-0123456789";
const MAIL_TOKEN = "node-red-mail-service-token-0123456789";
/** Not an NFTPort key at all: NFTPort answers 401 invalid_api_key. */
const BAD_KEY = "not-an-nftport-key-0123456789";
/** Not OpenSea's key: it answers 401. */
const BAD_OPENSEA_KEY = "not-an-opensea-key-0123456789";
const WATCHED = "0x8888888888888888888888888888888888888888";
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
/** The contract the whole-chain activity node follows: its records lie far above every other record of the dataset. */
const CHAINED = "0x8888888888888888888888888888888888888889";
/** The whole-chain activity node's start block. */
const CHAIN_START = 90_000_010;
const chained = (block: number): Rec => ({ ...transfer(block), contract_address: CHAINED });
/** A contract beside it on the chain, which the whole-chain trigger's Contracts filter leaves out. */
const UNCHAINED = "0x8888888888888888888888888888888888888890";
const transfer = (block: number): Rec => ({
  type: "transfer",
  transfer_from: "0x00000000000000000000000000000000000000a0",
  transfer_to: "0x00000000000000000000000000000000000000b0",
  contract_address: WATCHED,
  token_id: String(block),
  quantity: 1,
  transaction_hash: hash(block),
  block_hash: hash(block + 1),
  block_number: block,
  transaction_date: new Date(Date.UTC(2024, 0, 1) + block * 12_000).toISOString().slice(0, 19),
});

interface Received {
  path: string;
  body: string;
}

let nftport: NftportServer;
let opensea: OpenSeaServer;
let mailjet: MailjetServer;
let service: RunningServer;
let mailService: RunningServer;
let indexService: IndexWithOpenSea;
let sink: Server;
let sinkUrl: string;
const received: Received[] = [];
let userDir: string;
let mailDir: string;
let port: number;

const mailEvent = (event: string, n: number, email: string) => ({
  event,
  time: 1_700_000_000 + n,
  // Beyond 2^53 (as Mailjet's are): written into the body as exact digits below.
  MessageID: String(2n ** 60n + BigInt(n)),
  email,
  Payload: `event-${n}`,
  ...(event === "bounce" ? { hard_bounce: true } : {}),
});
async function postEvents(events: object[]) {
  const res = await fetch(`${mailService.url}/events/mailjet`, {
    method: "POST",
    headers: { authorization: `Bearer ${MAIL_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(events).replace(/"MessageID":"(\d+)"/g, '"MessageID":$1'),
  });
  if (res.status !== 200) throw new Error(`events: ${res.status} ${await res.text()}`);
}
let nodeRed: Running | undefined;

/** What the sink got at one path, parsed. */
const at = (path: string) => received.filter((r) => r.path === path).map((r) => JSON.parse(r.body));
const textAt = (path: string) => received.filter((r) => r.path === path).map((r) => r.body);

async function startNodeRed() {
  for (let attempt = 1; ; attempt++) {
    nodeRed = start(
      runtime("NODE_RED"),
      ["--userDir", userDir, "--port", String(port), "--settings", join(userDir, "settings.js")],
      node24Env({ NFTPORT_BASE_URL: nftport.url, OPENSEA_BASE_URL: opensea.url, MAILJET_BASE_URL: mailjet.url }),
    );
    try {
      // "Started flows", not the server line before it: a deploy made before the first start is done would take that
      // first start's line for its own, and inject into flows not started yet. Node-RED starts its flows before it
      // listens, so the server line is waited for too: the port chosen free may have been taken meanwhile (by any
      // process's outgoing connection), and Node-RED then exits with "port in use".
      await nodeRed.waitFor(/Started flows/, 60_000);
      await nodeRed.waitFor(/Server now running at/, 60_000);
      return;
    } catch (err) {
      if (attempt >= 3 || !/port in use/.test(nodeRed.output())) throw err;
      await nodeRed.stop();
      port = await freePort();
    }
  }
}

const admin = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  if (!res.ok) {
    const said = nodeRed?.output().slice(-3000);
    throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${await res.text()}; Node-RED said:\n${said}`);
  }
  return res;
};

/** Every port of a node to the sink, at /<case>/<port index>. */
const sinkNodes = (name: string, outputs: number) =>
  Array.from({ length: outputs }, (_, i) => ({
    id: `${name}-sink-${i}`,
    type: "http request",
    z: "tab",
    method: "POST",
    ret: "txt",
    paytoqs: "ignore",
    url: `${sinkUrl}/${name}/${i}`,
    persist: false,
    headers: [],
    x: 600,
    y: 100,
    wires: [],
  }));

const inject = (name: string, target: string, payload: unknown) => ({
  id: `${name}-inject`,
  type: "inject",
  z: "tab",
  props: [{ p: "payload" }],
  once: false,
  topic: "",
  payload: JSON.stringify(payload),
  payloadType: "json",
  x: 100,
  y: 100,
  wires: [[target]],
});

const chainmail = (name: string, type: string, config?: string, fields: object = {}) => ({
  id: name,
  type,
  z: "tab",
  name,
  ...(config ? { config } : {}),
  ...fields,
  x: 300,
  y: 100,
  wires: [0, 1, 2].map((i) => [`${name}-sink-${i}`]),
});

/** A case: inject → chainmail node → its three ports to the sink. */
const scenario = (name: string, type: string, payload: unknown, config?: string, fields: object = {}) => [
  inject(name, name, payload),
  chainmail(name, type, config, fields),
  ...sinkNodes(name, 3),
];

function flows() {
  return [
    { id: "tab", type: "tab", label: "chainmail tests" },
    {
      id: "cfg-nftport",
      type: "chainmail-config",
      name: "nftport",
      source: "nftport",
      nftportBaseUrl: nftport.url,
      mailjetBaseUrl: mailjet.url,
      credentials: { nftportApiKey: VALID_KEY, mailjetApiKey: MJ_KEY, mailjetSecretKey: MJ_SECRET },
    },
    {
      id: "cfg-service",
      type: "chainmail-config",
      name: "service",
      source: "service",
      serviceUrl: service.url,
      credentials: { serviceToken: SERVICE_TOKEN },
    },
    // NFTPort for records; the service keeps the mail lifecycle (delivery events, suppressions).
    {
      id: "cfg-mail",
      type: "chainmail-config",
      name: "mail",
      source: "nftport",
      serviceUrl: mailService.url,
      mailjetBaseUrl: mailjet.url,
      credentials: {
        nftportApiKey: VALID_KEY,
        serviceToken: MAIL_TOKEN,
        mailjetApiKey: MJ_KEY,
        mailjetSecretKey: MJ_SECRET,
      },
    },
    // OpenSea's origin left empty: OPENSEA_BASE_URL of Node-RED's environment.
    {
      id: "cfg-opensea",
      type: "chainmail-config",
      name: "opensea",
      source: "opensea",
      credentials: { openseaApiKey: OPENSEA_KEY },
    },
    // index+opensea: a chainmail service over its own index with OpenSea's order book.
    {
      id: "cfg-index-opensea",
      type: "chainmail-config",
      name: "index+opensea",
      source: "service",
      serviceUrl: indexService.url,
      credentials: { serviceToken: indexService.token },
    },
    ...scenario("noconfig", "chainmail-nft-transactions-by-token", {
      query: { contract_address: CONTRACT_1155, token_id: HUGE_TOKEN, type: ["mint"], page_size: 3 },
      params: { api_key: VALID_KEY },
    }),
    ...scenario(
      "configured",
      "chainmail-nft-transactions-by-contract",
      { query: { contract_address: CONTRACT_721, page_size: 10 } },
      "cfg-nftport",
    ),
    ...scenario(
      "badinput",
      "chainmail-nft-transactions-on-chain",
      { query: { from_block: 20, to_block: 10 } },
      "cfg-nftport",
    ),
    ...scenario("refused", "chainmail-nft-transactions-by-contract", {
      query: { contract_address: CONTRACT_721 },
      params: { api_key: BAD_KEY },
    }),
    ...scenario(
      "service",
      "chainmail-nft-transactions-by-token",
      {
        query: { contract_address: CONTRACT_1155, token_id: HUGE_TOKEN, type: ["mint"], page_size: 3 },
      },
      "cfg-service",
    ),
    ...scenario(
      "opensea",
      "chainmail-nft-transactions-by-contract",
      { query: { contract_address: MULTI } },
      "cfg-opensea",
    ),
    ...scenario(
      "openseabids",
      "chainmail-nft-transactions-by-contract",
      { query: { contract_address: BAYC, type: ["bid", "list"], page_size: 5 } },
      "cfg-opensea",
    ),
    ...scenario(
      "opensearefused",
      "chainmail-nft-transactions-by-token",
      { query: { contract_address: MULTI, token_id: OPENSEA_HUGE_TOKEN }, params: { api_key: BAD_OPENSEA_KEY } },
      "cfg-opensea",
    ),
    ...scenario(
      "indexopensea",
      "chainmail-nft-transactions-by-contract",
      { query: { contract_address: BAYC, page_size: 5 } },
      "cfg-index-opensea",
    ),
    ...scenario(
      "email",
      "chainmail-email-send",
      {
        request: {
          Messages: ["a", "b"].map((who) => ({
            From: { Email: "alerts@chainmail.test", Name: "chainmail" },
            To: [{ Email: `${who}@example.com`, Name: who }],
            Subject: `hello ${who}`,
            TextPart: "hello",
            HTMLPart: "<p>hello</p>",
          })),
        },
      },
      "cfg-nftport",
    ),
    ...scenario(
      "emailsuppressed",
      "chainmail-email-send",
      {
        request: {
          Messages: [["gone@example.com"], ["kept@example.com", "Gone@Example.com"]].map((to) => ({
            From: { Email: "alerts@chainmail.test" },
            To: to.map((Email) => ({ Email })),
            Subject: `suppressed? ${to.join(" ")}`,
            TextPart: "hello",
          })),
        },
      },
      "cfg-mail",
      { suppressions: true },
    ),
    {
      id: "deliveries",
      type: "chainmail-mail-events",
      z: "tab",
      name: "deliveries",
      config: "cfg-mail",
      kinds: "bounce, spam",
      interval: "1",
      x: 100,
      y: 450,
      wires: [["deliveries-sink-0"]],
    },
    ...sinkNodes("deliveries", 1),
    {
      id: "watch",
      type: "chainmail-activity",
      z: "tab",
      name: "watch",
      config: "cfg-nftport",
      kind: "contract",
      contractAddress: WATCHED,
      types: "all",
      interval: "1",
      x: 100,
      y: 300,
      wires: [["watch-sink-0"]],
    },
    ...sinkNodes("watch", 1),
    {
      id: "watchos",
      type: "chainmail-activity",
      z: "tab",
      name: "watch opensea",
      config: "cfg-opensea",
      kind: "contract",
      contractAddress: GLYPHBOTS,
      types: "all",
      interval: "1",
      x: 100,
      y: 350,
      wires: [["watchos-sink-0"]],
    },
    ...sinkNodes("watchos", 1),
    {
      id: "watchchain",
      type: "chainmail-activity",
      z: "tab",
      name: "watch the chain",
      config: "cfg-nftport",
      kind: "chain",
      startBlock: String(CHAIN_START),
      contracts: CHAINED,
      types: "all",
      interval: "1",
      x: 100,
      y: 375,
      wires: [["watchchain-sink-0"]],
    },
    ...sinkNodes("watchchain", 1),
    // Every status any node shows, to check that no secret is ever in one.
    { id: "statuses", type: "status", z: "tab", scope: null, x: 100, y: 400, wires: [["status-payload"]] },
    {
      id: "status-payload",
      type: "change",
      z: "tab",
      rules: [{ t: "set", p: "payload", pt: "msg", to: "status", tot: "msg" }],
      x: 300,
      y: 400,
      wires: [["statuses-sink-0"]],
    },
    ...sinkNodes("statuses", 1),
  ];
}

beforeAll(async () => {
  const dataset = standardDataset();
  dataset.byContract.set(WATCHED, [transfer(5000), transfer(5001)]);
  dataset.byContract.set(CHAINED, [chained(CHAIN_START - 2), chained(CHAIN_START)]);
  dataset.byContract.set(UNCHAINED, [{ ...transfer(CHAIN_START + 5), contract_address: UNCHAINED }]);
  nftport = await startNftport(dataset);
  opensea = await startOpenSea(openseaDataset());
  mailjet = await startMailjet();
  service = await startServer({
    port: 0,
    config: testConfig({ NFTPORT_BASE_URL: nftport.url, NFTPORT_API_KEY: VALID_KEY }),
    tokens: [SERVICE_TOKEN],
  });
  indexService = await startIndexWithOpenSea(opensea.url);
  mailDir = mkdtempSync(join(tmpdir(), "chainmail-node-red-mail-"));
  mailService = await startServer({
    port: 0,
    config: testConfig({ CHAINMAIL_MAIL_DB: join(mailDir, "mail.sqlite") }),
    tokens: [MAIL_TOKEN],
  });
  // Mailjet's events so far: a spam complaint (suppresses gone@example.com), an open (not followed), a bounce.
  await postEvents([
    mailEvent("spam", 1, "gone@example.com"),
    mailEvent("open", 2, "kept@example.com"),
    mailEvent("bounce", 3, "b@example.com"),
  ]);
  sink = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      received.push({ path: req.url ?? "", body });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

  userDir = mkdtempSync(join(tmpdir(), "chainmail-node-red-"));
  writeFileSync(join(userDir, "package.json"), '{"name":"node-red-project","private":true}');
  writeFileSync(
    join(userDir, "settings.js"),
    `module.exports = { flowFile: "flows.json", credentialSecret: "chainmail-test-secret", uiHost: "127.0.0.1",
      logging: { console: { level: "info" } }, editorTheme: { tours: false } };`,
  );
  // The tarball alone, as a user installs it: it must bring everything it needs.
  await installTarball(userDir, await pack("node-red-contrib-chainmail"), node24Env());
  port = await freePort();
  await startNodeRed();
  const deployed = nodeRed!.output().length;
  await admin("/flows", {
    method: "POST",
    headers: { "content-type": "application/json", "Node-RED-Deployment-Type": "full" },
    body: JSON.stringify(flows()),
  });
  await nodeRed!.waitFor(/Started flows/, 30_000, deployed);
  const cases = ["noconfig", "configured", "badinput", "refused", "service", "email", "emailsuppressed"];
  const openseaCases = ["opensea", "openseabids", "opensearefused", "indexopensea"];
  for (const name of [...cases, ...openseaCases]) {
    await admin(`/inject/${name}-inject`, { method: "POST" });
  }
  const answered = () => received.filter((r) => !/^\/(statuses|watch|watchos|watchchain|deliveries)\//.test(r.path));
  // Two ports each (data or error, and response), one (error) for bad input.
  await eventually(() => answered().length >= 21, "every case to answer").catch((error: Error) => {
    const paths = answered().map((r) => r.path);
    throw new Error(
      `${error.message}; the sink got ${paths.join(", ")}; Node-RED said:\n${nodeRed?.output().slice(-3000)}`,
    );
  });
}, 300_000);

afterAll(async () => {
  await nodeRed?.stop();
  await service?.close();
  await mailService?.close();
  await indexService?.close();
  await nftport?.close();
  await opensea?.close();
  await mailjet?.close();
  await new Promise((resolve) => sink?.close(resolve));
  if (userDir) rmSync(userDir, { recursive: true, force: true });
  if (mailDir) rmSync(mailDir, { recursive: true, force: true });
});

describe("node-red-contrib-chainmail in Node-RED 5", () => {
  it("installs from its tarball alone: no dependencies, no native module, chainmail bundled in", () => {
    const installed = join(userDir, "node_modules");
    expect(readdirSync(installed).filter((name) => !name.startsWith("."))).toEqual(["node-red-contrib-chainmail"]);
    const manifest = JSON.parse(readFileSync(join(installed, "node-red-contrib-chainmail", "package.json"), "utf8"));
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.keywords).toContain("node-red");
    // One node set per node type, each file with its editor and catalogue beside it.
    const nodes = manifest["node-red"].nodes as Record<string, string>;
    expect(Object.keys(nodes)).toEqual([...NODE_FILES.keys()]);
    for (const [type, file] of NODE_FILES) {
      expect(nodes[type]).toBe(`dist/nodes/${file}.js`);
      const base = join(installed, "node-red-contrib-chainmail", "dist", "nodes");
      for (const beside of [`${file}.html`, `locales/en-US/${file}.html`, `locales/en-US/${file}.json`]) {
        expect(existsSync(join(base, beside)), beside).toBe(true);
      }
    }
  });

  it("serves each node's editor, help and message catalogue through the admin API", async () => {
    const editor = await (await admin("/nodes", { headers: { Accept: "text/html" } })).text();
    /** A node set's message catalogue, as the editor asks for it. */
    const label = async (type: string) =>
      (await (await admin(`/locales/node-red-contrib-chainmail/${type}?lng=en-US`)).json()) as Record<
        string,
        Record<string, unknown>
      >;
    for (const type of NODE_FILES.keys()) {
      expect(editor).toContain(`<script type="text/html" data-template-name="${type}">`);
      expect(editor).toContain(`<script type="text/html" data-help-name="${type}">`);
      // The messages every node shares are in each node's catalogue.
      expect((await label(type)).chainmail?.label, type).toMatchObject({ name: "Name", config: "Config" });
    }
    // One help text of each, as written (the shared parts written in by the build).
    expect(editor).toContain("Credentials and origins for the chainmail nodes that use it.");
    expect(editor).toContain("<b>NFT transactions by contract retriever.</b>");
    expect(editor).toContain("<b>All chain NFT transactions retriever.</b>");
    expect(editor).toContain("<b>NFT transactions retriever.</b>");
    expect(editor).toContain("<b>Email sender.</b>");
    expect(editor).toContain("Sends one message per new NFT record of a contract");
    expect(editor).toContain("Sends one message per Mailjet delivery event");
    expect(editor).toContain("<li>response<dl");
    expect(editor).not.toMatch(/(<!--|\/\/) include: /);
    // One label of each, from its catalogue.
    expect((await label("chainmail-config")).config?.label).toEqual({ source: "NFT source" });
    expect((await label("chainmail-nft-transactions-by-contract"))["nft-transactions-by-contract"]?.paletteLabel).toBe(
      "by contract",
    );
    expect((await label("chainmail-nft-transactions-on-chain"))["nft-transactions-on-chain"]?.paletteLabel).toBe(
      "on chain",
    );
    expect((await label("chainmail-nft-transactions-by-token"))["nft-transactions-by-token"]?.paletteLabel).toBe(
      "by token",
    );
    expect((await label("chainmail-email-send"))["email-send"]?.paletteLabel).toBe("email send");
    expect((await label("chainmail-activity")).activity?.paletteLabel).toBe("activity");
    expect((await label("chainmail-mail-events"))["mail-events"]?.paletteLabel).toBe("delivery events");
  });

  it("with no config node: origins from the environment, the key from the input; data and response fire, error does not", () => {
    const [data] = at("/noconfig/0");
    expect(data.transactions).toHaveLength(3);
    expect(at("/noconfig/1")[0].status).toBe(200);
    expect(at("/noconfig/2")).toEqual([]);
    // Exact decimal strings, every digit, on the wire out of Node-RED.
    expect(textAt("/noconfig/0")[0]).toContain('"quantity":"10000000000000000000000"');
    expect(data.transactions[0].nft?.token_id ?? data.transactions[0].token_id).toBe(HUGE_TOKEN);
  });

  it("with a config node: its credential is used, and kept out of the flow file", () => {
    expect(at("/configured/0")[0].transactions).toHaveLength(10);
    const flowFile = JSON.parse(readFileSync(join(userDir, "flows.json"), "utf8")) as { id: string }[];
    const config = JSON.stringify(flowFile.find((node) => node.id === "cfg-nftport"));
    expect(config).toContain(nftport.url);
    for (const secret of [VALID_KEY, MJ_KEY, MJ_SECRET]) expect(config).not.toContain(secret);
    // Node-RED's credential file, encrypted with the credential secret.
    const credentials = readFileSync(join(userDir, "flows_cred.json"), "utf8");
    for (const secret of [VALID_KEY, MJ_KEY, MJ_SECRET, SERVICE_TOKEN]) expect(credentials).not.toContain(secret);
  });

  it("bad input: only the error port fires, naming the field and the rule", () => {
    expect(at("/badinput/0")).toEqual([]);
    expect(at("/badinput/1")).toEqual([]);
    const [error] = at("/badinput/2");
    expect(error.details.code).toBe("invalid_input");
    expect(error.error).toContain("query.from_block");
  });

  it("a refused key (401): error and response fire; the key is in no message, status or log", () => {
    const [error] = at("/refused/2");
    expect(error.details.code).toBe("upstream_auth");
    expect(at("/refused/1")[0].status).toBe(401);
    expect(at("/refused/0")).toEqual([]);
    for (const secret of [BAD_KEY, MJ_SECRET, SERVICE_TOKEN]) {
      for (const r of received) expect(r.body).not.toContain(secret);
      expect(nodeRed!.output()).not.toContain(secret);
    }
    const statuses = at("/statuses/0").map((status) => status.text);
    expect(statuses).toContain("upstream_auth");
  });

  it("through a chainmail service with its token: the same records", () => {
    expect(at("/service/0")[0].transactions).toEqual(at("/noconfig/0")[0].transactions);
  });

  it("OpenSea (its key from the config node, its origin from OPENSEA_BASE_URL): records with a quantity beyond 2^63 exact", () => {
    const [data] = at("/opensea/0");
    expect(data.transactions.map((r: { type: string }) => r.type)).toEqual(["list", "transfer", "sale"]);
    expect(at("/opensea/2")).toEqual([]);
    // Every digit, as a decimal string, on the wire out of Node-RED.
    for (const record of data.transactions) expect(record.quantity).toBe(String(HUGE_QUANTITY));
    expect(textAt("/opensea/0")[0]).toContain(`"quantity":"${HUGE_QUANTITY}"`);
    expect(data.transactions[0].nft.token_id).toBe(OPENSEA_HUGE_TOKEN);
    expect(at("/opensea/1")[0].status).toBe(200);
    expect(opensea.requests.every((r) => r.apiKey === OPENSEA_KEY || r.apiKey === BAD_OPENSEA_KEY)).toBe(true);
  });

  it("OpenSea's order book: bids and listings with their makers and prices", () => {
    const [data] = at("/openseabids/0");
    expect(data.transactions).toHaveLength(5);
    for (const record of data.transactions) {
      expect(["bid", "list"]).toContain(record.type);
      expect(record.marketplace).toBe("opensea");
      expect(record.price_details.asset_type).toMatch(/^(ETH|ERC20)$/);
      expect(record.bidder_address ?? record.lister_address).toMatch(/^0x[0-9a-f]{40}$/);
    }
    expect(data.continuation).not.toBe("");
  });

  it("OpenSea refusing the key (401): the error port names it, the response port has the 401, the key is nowhere", () => {
    const [error] = at("/opensearefused/2");
    expect(error.details.code).toBe("upstream_auth");
    expect(error.details.upstream).toBe("OpenSea");
    expect(at("/opensearefused/1")[0].status).toBe(401);
    expect(at("/opensearefused/0")).toEqual([]);
    for (const secret of [BAD_OPENSEA_KEY, OPENSEA_KEY]) {
      for (const r of received) expect(r.body).not.toContain(secret);
      expect(nodeRed!.output()).not.toContain(secret);
    }
    const credentials = readFileSync(join(userDir, "flows_cred.json"), "utf8");
    expect(credentials).not.toContain(OPENSEA_KEY);
  });

  it("index+opensea through a chainmail service: the index's on-chain records and OpenSea's bids in one stream", () => {
    const [data] = at("/indexopensea/0");
    expect(data.transactions).toHaveLength(5);
    expect(data.transactions[0]).toMatchObject({ type: "transfer", transaction_hash: indexService.newestTransfer });
    expect(data.transactions.slice(1).map((r: { type: string }) => r.type)).toEqual(["bid", "bid", "bid", "bid"]);
    expect(data.continuation).not.toBe("");
  });

  it("email: one result per message, MessageIDs as exact strings, each message sent once", () => {
    const [sent] = at("/email/0");
    expect(sent.Messages.map((m: { Status: string }) => m.Status)).toEqual(["success", "success"]);
    const id = sent.Messages[0].To[0].MessageID;
    expect(typeof id).toBe("string");
    expect(BigInt(id) > 2n ** 53n).toBe(true);
    expect(mailjet.duplicates()).toEqual([]);
  });

  it("email with suppressions: a suppressed recipient answered per message (reason, since), the rest sent", () => {
    const [sent] = at("/emailsuppressed/0");
    const [alone, shared] = sent.Messages;
    // Its only recipient suppressed: not sent at all.
    expect(alone.Status).toBe("error");
    expect(alone.Errors).toEqual([
      expect.objectContaining({
        ErrorCode: "suppressed",
        Reason: "spam",
        Since: expect.any(String),
        ErrorRelatedTo: ["To[0].Email"],
      }),
    ]);
    expect(alone.To).toBeUndefined();
    // Sent to the other recipient; the suppressed one named among its errors.
    expect(shared.Status).toBe("error");
    expect(shared.To.map((r: { Email: string }) => r.Email)).toEqual(["kept@example.com"]);
    expect(shared.Errors).toEqual([expect.objectContaining({ ErrorCode: "suppressed", Reason: "spam" })]);
    const mailed = mailjet.deliveries.filter((d) => String(d.subject).startsWith("suppressed?"));
    expect(mailed.map((d) => d.email)).toEqual(["kept@example.com"]);
  });

  it("delivery events: the kinds chosen, each once, in order, with the EventPayload", async () => {
    const sent = () => at("/deliveries/0");
    await eventually(() => sent().length >= 2, "the stored spam and bounce");
    expect(sent().map((e) => [e.event, e.email, e.Payload])).toEqual([
      ["spam", "gone@example.com", "event-1"],
      ["bounce", "b@example.com", "event-3"],
    ]);
    expect(sent()[1]).toMatchObject({ hard_bounce: true, MessageID: String(2n ** 60n + 3n), State: "bounced" });
    await postEvents([
      mailEvent("click", 4, "kept@example.com"),
      mailEvent("spam", 5, "c@example.com"),
      mailEvent("spam", 1, "gone@example.com"),
    ]);
    await eventually(() => sent().length >= 3, "the new spam complaint");
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(sent().map((e) => e.email)).toEqual(["gone@example.com", "b@example.com", "c@example.com"]);
  }, 60_000);

  it("activity: each new record once, its cursor surviving a restart of Node-RED", async () => {
    const sent = () => at("/watch/0").map((msg) => msg.transaction_hash);
    // The first poll notes where the contract stands: nothing sent.
    await eventually(() => at("/statuses/0").some((status) => status.text?.startsWith("0 new")), "the first poll");
    nftport.add(WATCHED, [transfer(5002)]);
    await eventually(() => sent().length >= 1, "the new record");
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(sent()).toEqual([hash(5002)]);

    // Records that arrive while Node-RED is down are sent after the restart, and nothing twice.
    await nodeRed!.stop();
    nftport.add(WATCHED, [transfer(5003), transfer(5004)]);
    await startNodeRed();
    await eventually(() => sent().length >= 3, "the records added while stopped");
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(sent()).toEqual([hash(5002), hash(5003), hash(5004)]);
  }, 120_000);

  it("activity over OpenSea: a contract's new listings and sales once each, across the restart", async () => {
    const sent = () => at("/watchos/0");
    const polled = () =>
      at("/statuses/0").filter((status) => status.source?.id === "watchos" && /^\d+ new/.test(status.text));
    // Polling since the deploy, and through the restart above: nothing new yet, nothing sent.
    await eventually(() => polled().length > 0, "a poll of OpenSea");
    expect(sent()).toEqual([]);
    const [listing] = fixture("glyphbots-events-by-collection.json").asset_events;
    const sale = fixture("glyphbots-events-by-nft.json").asset_events.find((e) => e.event_type === "sale")!;
    const newest = Number(listing!.event_timestamp);
    opensea.add("glyphbots", [
      { ...listing, event_timestamp: newest + 60 },
      { ...sale, event_timestamp: newest + 61, transaction: `0x${"5a".repeat(32)}` },
    ]);
    await eventually(() => sent().length >= 2, "the new listing and sale");
    const polls = polled().length;
    await eventually(() => polled().length >= polls + 2, "two more polls");
    expect(sent().map((record) => record.type)).toEqual(["list", "sale"]);
    expect(sent()[1].transaction_hash).toBe(`0x${"5a".repeat(32)}`);
    for (const r of received) expect(r.body).not.toContain(OPENSEA_KEY);
  }, 120_000);

  it("activity on the whole chain: nothing before its start block, ever, the re-read window included", async () => {
    const sent = () => at("/watchchain/0").map((msg) => msg.transaction_hash);
    const polled = () =>
      at("/statuses/0").filter((status) => status.source?.id === "watchchain" && /^\d+ new/.test(status.text));
    await eventually(() => sent().length >= 1, "the record at the start block");
    // A late record of a block before the start (inside the 12 blocks every poll reads again), and one after it.
    nftport.add(CHAINED, [chained(CHAIN_START - 1), chained(CHAIN_START + 1)]);
    await eventually(() => sent().length >= 2, "the record after the start block");
    const polls = polled().length;
    await eventually(() => polled().length >= polls + 2, "two more polls");
    expect(sent()).toEqual([hash(CHAIN_START), hash(CHAIN_START + 1)]);
  }, 120_000);

  it("delivery events after the restart: none sent twice, those stored while down sent once", async () => {
    const sent = () => at("/deliveries/0").map((e) => e.email);
    await postEvents([mailEvent("unsub", 6, "d@example.com"), mailEvent("bounce", 7, "e@example.com")]);
    await eventually(() => sent().length >= 4, "the bounce stored after the restart");
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(sent()).toEqual(["gone@example.com", "b@example.com", "c@example.com", "e@example.com"]);
    for (const r of received) expect(r.body).not.toContain(MAIL_TOKEN);
  }, 60_000);
});
