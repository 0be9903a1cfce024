/**
 * A client generated from the served `/openapi.json` the way its users generate one: openapi-typescript's command
 * line writes the types, tsc compiles a program against them with openapi-fetch, and the program runs against
 * the service, itself on the local NFTPort- and Mailjet-compatible servers. With `?bigint=string` an ERC-1155
 * quantity and a Mailjet MessageID beyond 2^53 arrive with every digit; without it, the client's JSON.parse rounds.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { testConfig } from "../support/helpers.js";
import { API_KEY, FIRST_MESSAGE_ID, type MailjetServer, SECRET_KEY, startMailjet } from "../upstreams/mailjet.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_1155, HUGE_QUANTITY, HUGE_TOKEN, standardDataset } from "../upstreams/nftport-data.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");
/** Under the repo's node_modules, so the program resolves openapi-fetch and @types/node as a user's project would. */
const CACHE = join(ROOT, "node_modules", ".cache");
const TOKEN = "client-token-0123456789abcdef";

/** The program a user would write with the generated types. */
const PROGRAM = `
import createClient from "openapi-fetch";
import type { paths } from "./api.js";

const [baseUrl, token, contract, tokenId, apiKey, mailUser, mailPassword] = process.argv.slice(2) as [
  string, string, string, string, string, string, string,
];
const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });

/** Fails to compile unless \`Wide\` admits \`Narrow\`: the document must describe the digit-string form. */
type Admits<Wide, Narrow> = [Narrow] extends [Wide] ? true : false;

const body = {
  query: { contract_address: contract, token_id: tokenId, type: ["mint" as const] },
  params: { api_key: apiKey },
};
const exact = await client.POST("/nodes/nft-transactions-by-token", { params: { query: { bigint: "string" } }, body });
const rounded = await client.POST("/nodes/nft-transactions-by-token", { body });
const record = exact.data?.data?.transactions[0];
const quantity = record?.quantity;
const quantityAdmitsDigits: Admits<typeof quantity, string> = true;

const sent = await client.POST("/nodes/email-send", {
  params: { query: { bigint: "string" } },
  body: {
    params: { "user id": mailUser, password: mailPassword },
    request: {
      Messages: [
        { From: { Email: "news@chainmail.test" }, To: [{ Email: "reader@example.org" }], Subject: "Hi", TextPart: "Hi" },
      ],
    },
  },
});
const messageId = sent.data?.["messages sent"]?.Messages[0]?.To?.[0]?.MessageID;
const messageIdAdmitsDigits: Admits<typeof messageId, string> = true;

console.log(
  JSON.stringify({
    statuses: [exact.response.status, rounded.response.status, sent.response.status],
    quantity,
    plainQuantity: rounded.data?.data?.transactions[0]?.quantity,
    messageId,
    checks: [quantityAdmitsDigits, messageIdAdmitsDigits],
  }),
);
`;

/** tsc on the program, as a user's project would compile it (strict, NodeNext); the diagnostics, or none. */
function compile(dir: string): string[] {
  const program = ts.createProgram([join(dir, "client.ts")], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    types: ["node"],
    outDir: dir,
  });
  const emitted = program.emit();
  return [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, "\n"),
  );
}

let nftport: NftportServer;
let mailjet: MailjetServer;
let service: RunningServer;
let dir: string;

beforeAll(async () => {
  [nftport, mailjet] = await Promise.all([startNftport(standardDataset()), startMailjet()]);
  service = await startServer({
    port: 0,
    config: testConfig({ NFTPORT_BASE_URL: nftport.url, MAILJET_BASE_URL: mailjet.url, CHAINMAIL_TOKENS: TOKEN }),
  });
  await mkdir(CACHE, { recursive: true });
  dir = await mkdtemp(join(CACHE, "chainmail-openapi-client-"));
  await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
  await writeFile(join(dir, "client.ts"), PROGRAM);
});
afterAll(async () => {
  await service?.close();
  await Promise.all([nftport?.close(), mailjet?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a client generated with openapi-typescript + openapi-fetch", () => {
  it("compiles with tsc and keeps a quantity and a MessageID beyond 2^53 exact with ?bigint=string", async () => {
    const generator = join(ROOT, "node_modules", "openapi-typescript", "bin", "cli.js");
    await run(process.execPath, [generator, `${service.url}/openapi.json`, "--output", join(dir, "api.ts")], {
      cwd: dir,
    });
    expect(compile(dir)).toEqual([]);

    const args = [
      join(dir, "client.js"),
      service.url,
      TOKEN,
      CONTRACT_1155,
      HUGE_TOKEN,
      VALID_KEY,
      API_KEY,
      SECRET_KEY,
    ];
    const { stdout } = await run(process.execPath, args, { cwd: dir });
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result.statuses).toEqual([200, 200, 200]);
    expect(result.quantity).toBe(HUGE_QUANTITY.toString());
    expect(result.messageId).toBe(FIRST_MESSAGE_ID.toString());
    expect(FIRST_MESSAGE_ID).toBeGreaterThan(BigInt(Number.MAX_SAFE_INTEGER));
    // What the string form is for: the plain form, read with the client's JSON.parse, is a double beyond 2^53.
    expect(typeof result.plainQuantity).toBe("number");
    expect(Number.isSafeInteger(result.plainQuantity)).toBe(false);
  });
});
