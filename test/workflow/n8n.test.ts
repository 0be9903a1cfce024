/**
 * n8n-nodes-chainmail in a real n8n 2.41.1 under Node 24: the packed tarball installed as a community package,
 * credentials and workflows imported with n8n's CLI, workflows run with `n8n execute`, and the trigger polling in
 * `n8n start` across restarts, and every credential's test through the REST API of `n8n start` (what the editor's
 * "Test" button calls); every call goes to the local NFTPort-, OpenSea- and Mailjet-compatible servers and real
 * chainmail services (one over NFTPort, one over its own index with OpenSea's order book, one keeping the mail
 * lifecycle: the delivery trigger's events and the Email node's suppression lookup).
 */
import { randomUUID } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withExactStrings } from "../../src/core/json.js";
import { records } from "../../src/core/paginate.js";
import { nftTransactionsByContract } from "../../src/nodes/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { testConfig } from "../support/helpers.js";
import {
  FIRST_MESSAGE_ID,
  type MailjetServer,
  API_KEY as MJ_KEY,
  SECRET_KEY as MJ_SECRET,
  startMailjet,
} from "../upstreams/mailjet.js";
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
import { type RpcNode, startRpcNode } from "./rpc-node.js";
import { eventually, exec, freePort, installTarball, node24Env, pack, runtime, start } from "./runtimes.js";

const SERVICE_TOKEN = "n8n-service-token-0123456789";
const MAIL_TOKEN = "n8n-mail-service-token-0123456789";
const BAD_KEY = "ffffffff-ffff-4fff-8fff-ffffffffffff";
const BAD_OPENSEA_KEY = "0000000000000000000000000000bad0";
const WATCHED = "0x7777777777777777777777777777777777777777";
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
/** The contract the whole-chain trigger follows: its records lie far above every other record of the dataset. */
const CHAINED = "0x7777777777777777777777777777777777777778";
/** The whole-chain trigger's start block. */
const CHAIN_START = 90_000_010;
const chained = (block: number): Rec => ({ ...transfer(block), contract_address: CHAINED });
/** A contract beside it on the chain, which the whole-chain trigger's Contracts filter leaves out. */
const UNCHAINED = "0x7777777777777777777777777777777777777779";
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

let nftport: NftportServer;
let opensea: OpenSeaServer;
let mailjet: MailjetServer;
let service: RunningServer;
let mailService: RunningServer;
let mailDir: string;
let indexService: IndexWithOpenSea;
let rpc: RpcNode;
let home: string;
let env: Record<string, string>;

const n8n = (args: string[]) => exec(runtime("N8N"), args, { env, maxBuffer: 64 * 2 ** 20 });

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

beforeAll(async () => {
  const dataset = standardDataset();
  dataset.byContract.set(WATCHED, [transfer(3000), transfer(3001)]);
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
  mailDir = mkdtempSync(join(tmpdir(), "chainmail-n8n-mail-"));
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
  rpc = await startRpcNode();
  home = mkdtempSync(join(tmpdir(), "chainmail-n8n-"));
  // A user folder n8n has already migrated (scripts/ci/runtimes.sh made it), and the package as users get it.
  cpSync(runtime("N8N_USER_SEED"), join(home, "user"), { recursive: true });
  env = node24Env({
    N8N_USER_FOLDER: join(home, "user"),
    N8N_DIAGNOSTICS_ENABLED: "false",
    N8N_ENCRYPTION_KEY: "chainmail-ci-only",
    N8N_RUNNERS_ENABLED: "false",
    N8N_LOG_LEVEL: "info",
    N8N_GRACEFUL_SHUTDOWN_TIMEOUT: "5",
  });
  const nodes = join(home, "user", ".n8n", "nodes");
  mkdirSync(nodes, { recursive: true });
  writeFileSync(join(nodes, "package.json"), '{"private":true}');
  await installTarball(nodes, await pack("n8n-nodes-chainmail"), env);

  writeFileSync(join(home, "credentials.json"), JSON.stringify(credentials()));
  await n8n(["import:credentials", `--input=${join(home, "credentials.json")}`]);
  const workflows = join(home, "workflows");
  mkdirSync(workflows);
  for (const workflow of [everyOperation(), failing(), watching(), watchingOpenSea(), watchingChain(), deliveries()]) {
    writeFileSync(join(workflows, `${workflow.id}.json`), JSON.stringify(workflow));
  }
  await n8n(["import:workflow", "--separate", `--input=${workflows}`]);
  // Imported workflows are drafts: the trigger's runs once published.
  await n8n(["publish:workflow", "--id=watching"]);
  await n8n(["publish:workflow", "--id=watchingOpenSea"]);
  await n8n(["publish:workflow", "--id=watchingChain"]);
  await n8n(["publish:workflow", "--id=deliveries"]);
}, 300_000);

afterAll(async () => {
  await service?.close();
  await mailService?.close();
  await indexService?.close();
  await nftport?.close();
  await opensea?.close();
  await rpc?.close();
  await mailjet?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  if (mailDir) rmSync(mailDir, { recursive: true, force: true });
});

/** Every credential the workflows use, each good one with a refused twin (for the credential tests). */
function credentials() {
  const serviceData = (baseUrl: string, token: string) => ({ baseUrl, token });
  return [
    { id: "nftport", name: "NFTPort", type: "chainmailNftPortApi", data: { apiKey: VALID_KEY, baseUrl: nftport.url } },
    {
      id: "nftportbad",
      name: "NFTPort bad",
      type: "chainmailNftPortApi",
      data: { apiKey: BAD_KEY, baseUrl: nftport.url },
    },
    {
      id: "opensea",
      name: "OpenSea",
      type: "chainmailOpenSeaApi",
      data: { apiKey: OPENSEA_KEY, baseUrl: opensea.url },
    },
    {
      id: "opensearpc",
      name: "OpenSea with an RPC node",
      type: "chainmailOpenSeaApi",
      data: { apiKey: OPENSEA_KEY, baseUrl: opensea.url, rpcUrl: rpc.url },
    },
    {
      id: "openseabad",
      name: "OpenSea bad",
      type: "chainmailOpenSeaApi",
      data: { apiKey: BAD_OPENSEA_KEY, baseUrl: opensea.url },
    },
    { id: "service", name: "Service", type: "chainmailServiceApi", data: serviceData(service.url, SERVICE_TOKEN) },
    {
      id: "mailservice",
      name: "Mail service",
      type: "chainmailServiceApi",
      data: serviceData(mailService.url, MAIL_TOKEN),
    },
    {
      id: "servicebad",
      name: "Service bad",
      type: "chainmailServiceApi",
      data: serviceData(service.url, "not-its-token"),
    },
    {
      id: "indexopensea",
      name: "Service index+opensea",
      type: "chainmailServiceApi",
      data: serviceData(indexService.url, indexService.token),
    },
    {
      id: "mailjet",
      name: "Mailjet",
      type: "chainmailMailjetApi",
      data: { apiKey: MJ_KEY, secretKey: MJ_SECRET, baseUrl: mailjet.url },
    },
    {
      id: "mailjetbad",
      name: "Mailjet bad",
      type: "chainmailMailjetApi",
      data: { apiKey: MJ_KEY, secretKey: "not-its-secret", baseUrl: mailjet.url },
    },
  ];
}

const credential = (type: string, id: string) => ({ [type]: { id, name: id } });
const SOURCE_CREDENTIALS: Record<string, [string, string]> = {
  nftport: ["chainmailNftPortApi", "nftport"],
  opensea: ["chainmailOpenSeaApi", "opensea"],
  service: ["chainmailServiceApi", "service"],
};
const at = (x: number) => [x, 0];
const nft = (name: string, parameters: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: name,
  name,
  type: "n8n-nodes-chainmail.chainmailNft",
  typeVersion: 1,
  position: at(200),
  parameters,
  credentials: credential(...SOURCE_CREDENTIALS[parameters.source as string]!),
  ...extra,
});
const message = (subject: string, to = `${subject}@example.com`) => ({
  From: { Email: "alerts@chainmail.test", Name: "chainmail" },
  To: [{ Email: to, Name: "Someone" }],
  Subject: subject,
  TextPart: "hello",
  HTMLPart: "<p>hello</p>",
});
const email = (name: string, parameters: Record<string, unknown>) => ({
  id: name,
  name,
  type: "n8n-nodes-chainmail.chainmailEmail",
  typeVersion: 1,
  position: at(400),
  parameters,
  credentials: credential("chainmailMailjetApi", "mailjet"),
});
const connect = (pairs: [string, string, number?][]) => {
  const connections: Record<string, { main: { node: string; type: string; index: number }[][] }> = {};
  for (const [from, to, output = 0] of pairs) {
    connections[from] ??= { main: [] };
    const main = connections[from].main;
    while (main.length <= output) main.push([]);
    main[output]!.push({ node: to, type: "main", index: 0 });
  }
  return connections;
};
const manual = {
  id: "Start",
  name: "Start",
  type: "n8n-nodes-base.manualTrigger",
  typeVersion: 1,
  position: at(0),
  parameters: {},
};

/** Every operation side by side, from one manual start. */
function everyOperation() {
  const nodes = [
    manual,
    nft("By Token", {
      source: "nftport",
      operation: "getByToken",
      contractAddress: CONTRACT_1155,
      nftId: HUGE_TOKEN,
      types: ["mint"],
      returnAll: false,
      limit: 3,
    }),
    nft("By Contract", {
      source: "nftport",
      operation: "getByContract",
      contractAddress: CONTRACT_721,
      returnAll: true,
    }),
    nft("On Chain", {
      source: "nftport",
      operation: "getOnChain",
      fromBlock: 16000010,
      toBlock: 16000019,
      returnAll: true,
    }),
    nft("Raw Page", {
      source: "nftport",
      operation: "getByContract",
      contractAddress: CONTRACT_721,
      returnAll: false,
      limit: 5,
      options: { rawOutput: true },
    }),
    nft("Via Service", {
      source: "service",
      operation: "getByToken",
      contractAddress: CONTRACT_1155,
      nftId: HUGE_TOKEN,
      types: ["mint"],
      returnAll: false,
      limit: 3,
    }),
    nft("OpenSea Contract", {
      source: "opensea",
      operation: "getByContract",
      contractAddress: MULTI,
      returnAll: true,
    }),
    nft("OpenSea Bids", {
      source: "opensea",
      operation: "getByContract",
      contractAddress: BAYC,
      types: ["bid", "list"],
      returnAll: false,
      limit: 5,
    }),
    {
      ...nft(
        "OpenSea Refused",
        {
          source: "opensea",
          operation: "getByToken",
          contractAddress: MULTI,
          nftId: OPENSEA_HUGE_TOKEN,
          returnAll: true,
        },
        { onError: "continueErrorOutput" },
      ),
      credentials: credential("chainmailOpenSeaApi", "openseabad"),
    },
    {
      ...nft("OpenSea With Blocks", {
        source: "opensea",
        operation: "getByContract",
        contractAddress: MULTI,
        types: ["transfer"],
        returnAll: true,
      }),
      credentials: credential("chainmailOpenSeaApi", "opensearpc"),
    },
    {
      ...nft("Index And OpenSea", {
        source: "service",
        operation: "getByContract",
        contractAddress: BAYC,
        returnAll: false,
        limit: 5,
      }),
      credentials: credential("chainmailServiceApi", "indexopensea"),
    },
    nft(
      "Bad Input",
      { source: "nftport", operation: "getByContract", contractAddress: "0x1234", returnAll: false, limit: 1 },
      { onError: "continueErrorOutput" },
    ),
    {
      id: "To Messages",
      name: "To Messages",
      type: "n8n-nodes-base.set",
      typeVersion: 3.4,
      position: at(400),
      parameters: {
        mode: "raw",
        jsonOutput: `={{ JSON.stringify(${JSON.stringify(message("x", "y"))
          .replace('"x"', "'token ' + $json.transaction_hash")
          .replace('"y"', "$json.transaction_hash.slice(-8) + '@example.com'")}) }}`,
      },
    },
    email("Email Items", { messagesFrom: "items" }),
    email("Email Json", {
      messagesFrom: "json",
      request: JSON.stringify({ Messages: [message("one"), message("two")] }),
    }),
    {
      ...email("Email Suppressed", {
        messagesFrom: "json",
        suppressionList: "service",
        request: JSON.stringify({
          Messages: [message("suppressed alone", "gone@example.com"), message("suppressed kept", "kept@example.com")],
        }),
      }),
      credentials: {
        ...credential("chainmailMailjetApi", "mailjet"),
        ...credential("chainmailServiceApi", "mailservice"),
      },
    },
  ];
  return {
    id: "everyOperation",
    name: "every operation",
    active: false,
    nodes,
    connections: connect([
      ["Start", "By Token"],
      ["Start", "By Contract"],
      ["Start", "On Chain"],
      ["Start", "Raw Page"],
      ["Start", "Via Service"],
      ["Start", "OpenSea Contract"],
      ["Start", "OpenSea Bids"],
      ["Start", "OpenSea Refused"],
      ["Start", "OpenSea With Blocks"],
      ["Start", "Index And OpenSea"],
      ["Start", "Bad Input"],
      ["Start", "Email Json"],
      ["Start", "Email Suppressed"],
      ["By Token", "To Messages"],
      ["To Messages", "Email Items"],
    ]),
    settings: {},
  };
}

/** A retriever whose key NFTPort refuses, not continuing on fail: the execution fails with chainmail's message. */
function failing() {
  return {
    id: "failing",
    name: "failing",
    active: false,
    nodes: [
      manual,
      {
        ...nft("Refused", {
          source: "nftport",
          operation: "getByContract",
          contractAddress: CONTRACT_721,
          returnAll: false,
          limit: 1,
        }),
        credentials: credential("chainmailNftPortApi", "nftportbad"),
      },
    ],
    connections: connect([["Start", "Refused"]]),
    settings: {},
  };
}

/** The trigger on WATCHED, each new record mailed (the mails are what the test counts). */
function watching() {
  const request = `={{ ${JSON.stringify({ Messages: [message("SUBJECT", "TO")] })
    .replace('"SUBJECT"', "$json.transaction_hash")
    .replace('"TO"', "$json.transaction_hash.slice(-8) + '@example.org'")} }}`;
  return {
    id: "watching",
    name: "watching",
    active: true,
    nodes: [
      {
        id: "Watch",
        name: "Watch",
        type: "n8n-nodes-chainmail.chainmailTrigger",
        typeVersion: 1,
        position: at(0),
        parameters: {
          source: "nftport",
          watch: "contract",
          contractAddress: WATCHED,
          pollTimes: { item: [{ mode: "everyHour" }] },
        },
        credentials: credential("chainmailNftPortApi", "nftport"),
      },
      email("Mail Each", { messagesFrom: "json", request }),
    ],
    connections: connect([["Watch", "Mail Each"]]),
    settings: {},
  };
}

/** The delivery trigger on bounces and spam complaints, each mailed with its kind and recipient as the subject. */
function deliveries() {
  const request = `={{ ${JSON.stringify({ Messages: [message("SUBJECT", "deliveries@example.org")] }).replace(
    '"SUBJECT"',
    "'delivery ' + $json.event + ' ' + $json.email + ' ' + $json.Payload",
  )} }}`;
  return {
    id: "deliveries",
    name: "deliveries",
    active: true,
    nodes: [
      {
        id: "Deliveries",
        name: "Deliveries",
        type: "n8n-nodes-chainmail.chainmailDeliveryTrigger",
        typeVersion: 1,
        position: at(0),
        parameters: { events: ["bounce", "spam"], pollTimes: { item: [{ mode: "everyHour" }] } },
        credentials: credential("chainmailServiceApi", "mailservice"),
      },
      email("Mail Each Event", { messagesFrom: "json", request }),
    ],
    connections: connect([["Deliveries", "Mail Each Event"]]),
    settings: {},
  };
}

/** The trigger on OpenSea's GLYPHBOTS, each new record mailed with its kind and date as the subject. */
function watchingOpenSea() {
  const request = `={{ ${JSON.stringify({ Messages: [message("SUBJECT", "opensea@example.org")] }).replace(
    '"SUBJECT"',
    "'opensea ' + $json.type + ' ' + $json.transaction_date",
  )} }}`;
  return {
    id: "watchingOpenSea",
    name: "watching OpenSea",
    active: true,
    nodes: [
      {
        id: "Watch OpenSea",
        name: "Watch OpenSea",
        type: "n8n-nodes-chainmail.chainmailTrigger",
        typeVersion: 1,
        position: at(0),
        parameters: {
          source: "opensea",
          watch: "contract",
          contractAddress: GLYPHBOTS,
          pollTimes: { item: [{ mode: "everyHour" }] },
        },
        credentials: credential("chainmailOpenSeaApi", "opensea"),
      },
      email("Mail Each", { messagesFrom: "json", request }),
    ],
    connections: connect([["Watch OpenSea", "Mail Each"]]),
    settings: {},
  };
}

/** The trigger on the whole chain from CHAIN_START, each new record mailed with "chain <hash>" as the subject. */
function watchingChain() {
  const request = `={{ ${JSON.stringify({ Messages: [message("SUBJECT", "chain@example.org")] }).replace(
    '"SUBJECT"',
    "'chain ' + $json.transaction_hash",
  )} }}`;
  return {
    id: "watchingChain",
    name: "watching the chain",
    active: true,
    nodes: [
      {
        id: "Watch Chain",
        name: "Watch Chain",
        type: "n8n-nodes-chainmail.chainmailTrigger",
        typeVersion: 1,
        position: at(0),
        parameters: {
          source: "nftport",
          watch: "chain",
          startBlock: CHAIN_START,
          filters: { contracts: CHAINED },
          pollTimes: { item: [{ mode: "everyHour" }] },
        },
        credentials: credential("chainmailNftPortApi", "nftport"),
      },
      email("Mail Each", { messagesFrom: "json", request }),
    ],
    connections: connect([["Watch Chain", "Mail Each"]]),
    settings: {},
  };
}

type Item = { json: Record<string, any>; pairedItem?: { item: number } };
type RunData = Record<string, { data?: { main: Item[][] }; error?: { message: string } }[]>;

async function execute(id: string): Promise<{ runData: RunData; text: string; failed: boolean }> {
  let stdout: string;
  let failed = false;
  try {
    ({ stdout } = await n8n(["execute", `--id=${id}`, "--rawOutput"]));
  } catch (error) {
    failed = true;
    const {
      stdout: out = "",
      stderr = "",
      message = "",
    } = error as { stdout?: string; stderr?: string; message?: string };
    stdout = `${out}\n${stderr}\n${message}`;
  }
  // The execution as JSON between n8n's log lines: from a line "{" to a line "}".
  const json = /^\{$[\s\S]*?^\}$/m.exec(stdout)?.[0];
  let runData: RunData = {};
  try {
    runData = JSON.parse(json ?? "").data.resultData.runData;
  } catch {
    // A failed execution may print its error instead of run data: the text is what the test reads then.
  }
  return { runData, text: stdout, failed };
}

const main = (runData: RunData, node: string, output = 0): Item[] => runData[node]?.[0]?.data?.main[output] ?? [];

describe("n8n-nodes-chainmail in n8n 2.41.1", () => {
  let run: Awaited<ReturnType<typeof execute>>;
  beforeAll(async () => {
    run = await execute("everyOperation");
  }, 120_000);

  it("by token: one item per record, integers beyond 2^53 as exact strings, paired with its input", () => {
    const items = main(run.runData, "By Token");
    expect(items).toHaveLength(3);
    for (const item of items) {
      expect(item.json.token_id).toBe(HUGE_TOKEN);
      expect(item.json.quantity).toBe("10000000000000000000000");
      expect(item.pairedItem).toEqual({ item: 0 });
    }
  });

  it("return all: every record of a contract (three pages), in the upstream's order", async () => {
    const contractRecords: unknown[] = [];
    const config = testConfig({ NFTPORT_BASE_URL: nftport.url, NFTPORT_API_KEY: VALID_KEY });
    for await (const record of records(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721 } },
      {},
      { config },
    )) {
      contractRecords.push(withExactStrings(record));
    }
    const items = main(run.runData, "By Contract");
    expect(items).toHaveLength(130);
    expect(items.map((item) => item.json)).toEqual(contractRecords);
  });

  it("the whole chain within a block range", () => {
    const blocks = main(run.runData, "On Chain").map((item) => item.json.block_number as number);
    expect(blocks.length).toBeGreaterThan(0);
    expect(Math.min(...blocks)).toBeGreaterThanOrEqual(16000010);
    expect(Math.max(...blocks)).toBeLessThanOrEqual(16000019);
  });

  it("raw output: the node's output per page, with its continuation and the upstream's raw response", () => {
    const [page] = main(run.runData, "Raw Page");
    expect(page!.json.data.transactions).toHaveLength(5);
    expect(page!.json.data.continuation).not.toBe("");
    expect(page!.json.response.status).toBe(200);
    expect(page!.json.response.body).toContain('"response":"OK"');
  });

  it("through a chainmail service: the same records", () => {
    const direct = main(run.runData, "By Token").map((item) => item.json);
    expect(main(run.runData, "Via Service").map((item) => item.json)).toEqual(direct);
  });

  it("OpenSea: one item per record, a quantity beyond 2^63 as an exact string", () => {
    const items = main(run.runData, "OpenSea Contract");
    expect(items.map((item) => item.json.type)).toEqual(["list", "transfer", "sale"]);
    for (const item of items) {
      expect(item.json.quantity).toBe(String(HUGE_QUANTITY));
      expect(item.json.nft?.token_id ?? item.json.token_id).toBe(OPENSEA_HUGE_TOKEN);
      expect(item.pairedItem).toEqual({ item: 0 });
    }
    // The credential's key, as X-API-KEY, on every call n8n made for it.
    const calls = opensea.requests.filter((r) => r.apiKey !== BAD_OPENSEA_KEY);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((r) => r.apiKey === OPENSEA_KEY)).toBe(true);
  });

  it("OpenSea with an RPC node: each record's block from it, which never gets the OpenSea key", () => {
    const items = main(run.runData, "OpenSea With Blocks");
    expect(items).toHaveLength(1);
    expect(items[0]!.json).toMatchObject({
      type: "transfer",
      block_number: rpc.block.number,
      block_hash: rpc.block.hash,
    });
    expect(rpc.requests.length).toBeGreaterThan(0);
    for (const request of rpc.requests) {
      expect(request.methods.every((method) => method === "eth_getTransactionByHash")).toBe(true);
      expect(request.headers["x-api-key"]).toBeUndefined();
      expect(JSON.stringify(request.headers)).not.toContain(OPENSEA_KEY);
    }
  });

  it("OpenSea's order book: bids and listings, as many as the limit", () => {
    const items = main(run.runData, "OpenSea Bids");
    expect(items).toHaveLength(5);
    for (const { json } of items) {
      expect(["bid", "list"]).toContain(json.type);
      expect(json.marketplace).toBe("opensea");
      expect(json.bidder_address ?? json.lister_address).toMatch(/^0x[0-9a-f]{40}$/);
    }
  });

  it("OpenSea refusing the key (401): the item on the error output with chainmail's message and code", () => {
    expect(main(run.runData, "OpenSea Refused", 0)).toHaveLength(0);
    const [failure] = main(run.runData, "OpenSea Refused", 1);
    expect(failure!.json.details.code).toBe("upstream_auth");
    expect(failure!.json.details.status).toBe(401);
    expect(failure!.json.details.upstream).toBe("OpenSea");
    expect(failure!.json.error).toContain("OpenSea");
    expect(run.text).not.toContain(BAD_OPENSEA_KEY);
    expect(run.text).not.toContain(OPENSEA_KEY);
  });

  it("index+opensea through a chainmail service: the index's transfer and OpenSea's bids in one stream", () => {
    const items = main(run.runData, "Index And OpenSea").map((item) => item.json);
    expect(items).toHaveLength(5);
    expect(items[0]).toMatchObject({ type: "transfer", transaction_hash: indexService.newestTransfer });
    expect(items.slice(1).map((record) => record.type)).toEqual(["bid", "bid", "bid", "bid"]);
  });

  it("bad input goes to the error output with chainmail's message and code", () => {
    expect(main(run.runData, "Bad Input", 0)).toHaveLength(0);
    const [failure] = main(run.runData, "Bad Input", 1);
    expect(failure!.json.error).toContain("query.contract_address");
    expect(failure!.json.details.code).toBe("invalid_input");
  });

  it("email from items: one batch, one result per message paired with its item, MessageIDs exact", () => {
    const results = main(run.runData, "Email Items");
    expect(results.map((item) => item.pairedItem?.item)).toEqual([0, 1, 2]);
    for (const result of results) {
      expect(result.json.Status).toBe("success");
      expect(typeof result.json.To[0].MessageID).toBe("string");
      expect(BigInt(result.json.To[0].MessageID)).toBeGreaterThanOrEqual(FIRST_MESSAGE_ID);
    }
    const ids = [...results, ...main(run.runData, "Email Json")].map((item) => item.json.To[0].MessageID);
    expect(new Set(ids).size).toBe(5);
  });

  it("email from JSON: its messages sent once each, with Mailjet's own login", () => {
    expect(main(run.runData, "Email Json").map((item) => item.json.Status)).toEqual(["success", "success"]);
    const subjects = mailjet.deliveries.map((delivery) => delivery.subject);
    expect(subjects.filter((subject) => subject === "one")).toHaveLength(1);
    expect(mailjet.duplicates()).toEqual([]);
    const basic = `Basic ${Buffer.from(`${MJ_KEY}:${MJ_SECRET}`).toString("base64")}`;
    expect(mailjet.requests.every((request) => request.authorization === basic)).toBe(true);
  });

  it("email with the service's suppression list: a suppressed recipient answered per message, the rest sent", () => {
    const [alone, kept] = main(run.runData, "Email Suppressed");
    expect(alone!.json.Status).toBe("error");
    expect(alone!.json.Errors).toEqual([
      expect.objectContaining({ ErrorCode: "suppressed", Reason: "spam", Since: expect.any(String) }),
    ]);
    expect(kept!.json.Status).toBe("success");
    const mailed = mailjet.deliveries.filter((d) => String(d.subject).startsWith("suppressed "));
    expect(mailed.map((d) => [d.subject, d.email])).toEqual([["suppressed kept", "kept@example.com"]]);
  });

  it("a refused key fails the execution with chainmail's message and code, the key never shown", async () => {
    const failed = await execute("failing");
    expect(failed.failed || failed.runData.Refused?.[0]?.error !== undefined).toBe(true);
    expect(failed.text).toContain("NFTPort refused the API key");
    expect(failed.text).toContain("upstream_auth");
    expect(failed.text).not.toContain(BAD_KEY);
  }, 120_000);
});

describe("chainmailTrigger in n8n start", () => {
  const subjects = () => mailjet.deliveries.map((d) => String(d.subject));
  const mailed = () => subjects().filter((subject) => subject.startsWith("0x"));
  const mailedOpenSea = () => subjects().filter((subject) => subject.startsWith("opensea "));
  const polledOpenSea = () => opensea.requests.filter((r) => r.path === "/api/v2/events/collection/glyphbots").length;

  it("notes where the activity stands, then mails each new record once across restarts", async () => {
    const run = async (then: () => Promise<void>) => {
      const server = start(runtime("N8N"), ["start"], { ...env, N8N_PORT: "0", N8N_LISTEN_ADDRESS: "127.0.0.1" });
      try {
        await server.waitFor(/Editor is now accessible/, 120_000);
        await then();
      } finally {
        await server.stop();
      }
    };
    const settle = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));
    // First start: the activation polls only note the newest records.
    await run(async () => {
      await eventually(() => polledOpenSea() > 0, "the OpenSea trigger's first poll", 60_000);
      await settle(3_000)();
    });
    expect(mailed()).toEqual([]);
    expect(mailedOpenSea()).toEqual([]);

    nftport.add(WATCHED, [transfer(3002), transfer(3003)]);
    // On OpenSea, a new listing and a new sale of GLYPHBOTS (real events, a minute after its newest).
    const [listing] = fixture("glyphbots-events-by-collection.json").asset_events;
    const sale = fixture("glyphbots-events-by-nft.json").asset_events.find((e) => e.event_type === "sale")!;
    const newest = Number(listing!.event_timestamp);
    opensea.add("glyphbots", [
      { ...listing, event_timestamp: newest + 60 },
      { ...sale, event_timestamp: newest + 61, transaction: `0x${"5a".repeat(32)}` },
    ]);
    const openSeaMails = ["list", "sale"].map(
      (type, i) => `opensea ${type} ${new Date((newest + 60 + i) * 1000).toISOString().slice(0, 19)}`,
    );
    await run(async () => {
      await eventually(() => mailed().length >= 2, "the two new records mailed", 60_000);
      await eventually(() => mailedOpenSea().length >= 2, "OpenSea's new listing and sale mailed", 60_000);
      await settle(2_000)();
    });
    expect(mailed().sort()).toEqual([hash(3002), hash(3003)]);
    expect(mailedOpenSea().sort()).toEqual(openSeaMails);

    // Third start: nothing new, nothing mailed again.
    await run(settle(5_000));
    expect(mailed().sort()).toEqual([hash(3002), hash(3003)]);
    expect(mailedOpenSea().sort()).toEqual(openSeaMails);
  }, 300_000);
});

describe("chainmailDeliveryTrigger in n8n start", () => {
  const mailed = () =>
    mailjet.deliveries.map((d) => String(d.subject)).filter((subject) => subject.startsWith("delivery "));

  it("emits the kinds chosen, each once, across restarts; the events stored while stopped after", async () => {
    const run = async (then: () => Promise<void>) => {
      const server = start(runtime("N8N"), ["start"], { ...env, N8N_PORT: "0", N8N_LISTEN_ADDRESS: "127.0.0.1" });
      try {
        await server.waitFor(/Editor is now accessible/, 120_000);
        await then();
      } finally {
        await server.stop();
      }
    };
    const settle = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
    // First start: the activation's poll hands out every stored event of those kinds (not the open).
    await run(async () => {
      await eventually(() => mailed().length >= 2, "the stored spam and bounce", 60_000);
      await settle(2_000);
    });
    expect(mailed()).toEqual(["delivery spam gone@example.com event-1", "delivery bounce b@example.com event-3"]);
    // Stored while n8n is down: a click (not followed), a spam complaint, a replay of the first.
    await postEvents([
      mailEvent("click", 4, "kept@example.com"),
      mailEvent("spam", 5, "c@example.com"),
      mailEvent("spam", 1, "gone@example.com"),
    ]);
    await run(async () => {
      await eventually(() => mailed().length >= 3, "the new spam complaint", 60_000);
      await settle(2_000);
    });
    expect(mailed()).toEqual([
      "delivery spam gone@example.com event-1",
      "delivery bounce b@example.com event-3",
      "delivery spam c@example.com event-5",
    ]);
  }, 300_000);
});

describe("chainmailTrigger on the whole chain in n8n start", () => {
  const mailedChain = () =>
    mailjet.deliveries.map((d) => String(d.subject)).filter((subject) => subject.startsWith("chain "));

  it("never mails a record before its Start Block, the re-read window of a later poll included", async () => {
    const run = async (then: () => Promise<void>) => {
      const server = start(runtime("N8N"), ["start"], { ...env, N8N_PORT: "0", N8N_LISTEN_ADDRESS: "127.0.0.1" });
      try {
        await server.waitFor(/Editor is now accessible/, 120_000);
        await then();
      } finally {
        await server.stop();
      }
    };
    const first = [`chain ${hash(CHAIN_START)}`];
    // The starts before (or this one): the first poll mails the record at the start block, not the one before.
    if (!mailedChain().length) await run(() => eventually(() => mailedChain().length >= 1, "the first poll", 60_000));
    expect(mailedChain()).toEqual(first);
    // A late record two blocks before the start (inside the 12 blocks a poll reads again), and one after it.
    nftport.add(CHAINED, [chained(CHAIN_START - 1), chained(CHAIN_START + 1)]);
    const next = [...first, `chain ${hash(CHAIN_START + 1)}`];
    await run(async () => {
      await eventually(() => mailedChain().length >= 2, "the record after the start", 60_000);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    });
    expect(mailedChain()).toEqual(next);
  }, 300_000);
});

/**
 * Each credential's `test` as n8n runs it when a user presses "Test" in the editor: `POST /rest/credentials/test` of
 * a running `n8n start`, as its owner (set up through `POST /rest/owner/setup`, the first-run form's call).
 */
describe("credential tests in n8n start", () => {
  it("each credential's test passes with the right values and fails with refused ones", async () => {
    const port = await freePort();
    const server = start(runtime("N8N"), ["start"], {
      ...env,
      N8N_PORT: String(port),
      N8N_LISTEN_ADDRESS: "127.0.0.1",
    });
    try {
      await server.waitFor(/Editor is now accessible/, 120_000);
      const rest = `http://127.0.0.1:${port}/rest`;
      // n8n binds its login cookie to the browser that got it.
      const headers: Record<string, string> = { "content-type": "application/json", "browser-id": randomUUID() };
      const setup = await fetch(`${rest}/owner/setup`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          email: "owner@chainmail.test",
          firstName: "Chain",
          lastName: "Mail",
          password: "Chainmail-ci-0",
        }),
      });
      expect(setup.status, await setup.clone().text()).toBe(200);
      headers.cookie = setup.headers
        .getSetCookie()
        .map((cookie) => cookie.split(";")[0])
        .join("; ");
      const outcomes: Record<string, { status: string; message: string }> = {};
      for (const tested of credentials()) {
        const answer = await fetch(`${rest}/credentials/test`, {
          method: "POST",
          headers,
          body: JSON.stringify({ credentials: tested }),
        });
        const text = await answer.text();
        expect(answer.status, text).toBe(200);
        outcomes[tested.id] = JSON.parse(text).data;
      }
      const ok = { status: "OK", message: "Connection successful!" };
      // The upstream's refusal (401 or 403), as n8n words it.
      const refused = { status: "Error", message: expect.stringMatching(/^(Unauthorized|Forbidden)$/) };
      expect(outcomes).toMatchObject({
        nftport: ok,
        nftportbad: refused,
        opensea: ok,
        opensearpc: ok,
        openseabad: refused,
        service: ok,
        servicebad: refused,
        indexopensea: ok,
        mailjet: ok,
        mailjetbad: refused,
      });
      // Each test asked the upstream with the credential's own authentication.
      // (n8n asks a refused credential's test twice.)
      const keys = opensea.requests.filter((r) => r.path === "/api/v2/events").map((r) => r.apiKey);
      expect([...new Set(keys)]).toEqual([OPENSEA_KEY, BAD_OPENSEA_KEY]);
      expect(keys.filter((key) => key === OPENSEA_KEY)).toHaveLength(2);
      for (const secret of [BAD_KEY, BAD_OPENSEA_KEY, OPENSEA_KEY, MJ_SECRET, SERVICE_TOKEN]) {
        expect(JSON.stringify(outcomes)).not.toContain(secret);
      }
    } finally {
      await server.stop();
    }
  }, 300_000);
});
