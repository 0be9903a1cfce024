/**
 * The OpenAPI 3.1 document: valid per a real validator, clean under Redocly's recommended rules with and without
 * tokens, generated from the node port schemas.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeNode } from "../../src/core/node.js";
import { nodes } from "../../src/nodes/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { testConfig } from "../support/helpers.js";
import { call } from "../support/server-helpers.js";

let open: RunningServer;
let guarded: RunningServer;

beforeAll(async () => {
  open = await startServer({ port: 0, config: testConfig() });
  guarded = await startServer({ port: 0, config: testConfig({ CHAINMAIL_TOKENS: "a-long-enough-token-123" }) });
});
afterAll(async () => {
  await open.close();
  await guarded.close();
});

describe("GET /openapi.json", () => {
  for (const which of ["open", "guarded"] as const) {
    it(`is a valid OpenAPI 3.1 document (${which})`, async () => {
      const res = await call(`${which === "open" ? open.url : guarded.url}/openapi.json`, "GET");
      expect(res.status).toBe(200);
      expect(res.body.openapi).toBe("3.1.0");
      const result = await validate(structuredClone(res.body));
      expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    });
  }

  it("is checked by a validator that does reject a broken document", async () => {
    const doc = (await call(`${open.url}/openapi.json`, "GET")).body;
    doc.paths["/nodes/nft-transactions-by-token"].post.responses = "none";
    expect((await validate(doc)).valid).toBe(false);
  });

  it("documents every node from its port schemas, with its statuses", async () => {
    const doc = (await call(`${open.url}/openapi.json`, "GET")).body;
    for (const node of Object.values(nodes)) {
      const op = doc.paths[`/nodes/${node.id}`].post;
      expect(op.operationId).toBe(node.id);
      const input = op.requestBody.content["application/json"].schema;
      expect(Object.keys(input.properties)).toEqual(Object.keys(node.inputs));
      expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "408", "413", "500", "502", "503", "504"]);
      const output = op.responses["200"].content["application/json"].schema;
      expect(Object.keys(output.properties)).toEqual(Object.keys(node.outputs));
      // Open without tokens: a bearer token is optional there, and the scheme stays declared.
      expect(op.security).toEqual([{}, { bearer: [] }]);
      expect(op.parameters).toEqual([expect.objectContaining({ name: "bigint", in: "query" })]);
    }
    // Named schemas are shared components; the rest is the port schema itself, keyword for keyword.
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["RawResponse", "ErrorPayload"]));
    const byToken = describeNode(nodes["nft-transactions-by-token"]!);
    const query =
      doc.paths["/nodes/nft-transactions-by-token"].post.requestBody.content["application/json"].schema.properties
        .query;
    expect(query).toEqual(byToken.inputs.query);
  });

  it("lists the service routes", async () => {
    const doc = (await call(`${open.url}/openapi.json`, "GET")).body;
    for (const path of ["/nodes", "/openapi.json", "/healthz", "/metrics"]) expect(doc.paths[path]?.get).toBeDefined();
  });
});

/** Redocly's command line (recommended rules) on a document: its problems by rule and severity. */
async function redoclyLint(doc: unknown): Promise<{ ruleId: string; severity: string; message: string }[]> {
  const dir = await mkdtemp(join(tmpdir(), "chainmail-redocly-"));
  try {
    await writeFile(join(dir, "openapi.json"), JSON.stringify(doc));
    const cli = join(import.meta.dirname, "..", "..", "node_modules", "@redocly", "cli", "bin", "cli.js");
    // No telemetry, no update check: the test reaches no network.
    const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
    const args = [cli, "lint", "openapi.json", "--format=json"];
    // Exit status 1 when it found errors: the JSON report is on stdout either way.
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, args, { cwd: dir, env }, (err, out) =>
        out ? resolve(out) : reject(err ?? new Error("no report")),
      ),
    );
    return (JSON.parse(stdout) as { problems: { ruleId: string; severity: string; message: string }[] }).problems;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("Redocly lint (recommended rules) on the served document", () => {
  for (const which of ["open", "guarded"] as const) {
    it(`finds no problem (${which})`, async () => {
      const doc = (await call(`${which === "open" ? open.url : guarded.url}/openapi.json`, "GET")).body;
      // `info.license` is added on its own; until it is there, that one warning is expected.
      const problems = (await redoclyLint(doc)).filter((p) => doc.info.license || p.ruleId !== "info-license");
      expect(problems).toEqual([]);
    });
  }

  it("is a linter that does report what the document once lacked", async () => {
    const doc = (await call(`${guarded.url}/openapi.json`, "GET")).body;
    delete doc.servers;
    delete doc.paths["/healthz"].get.security;
    delete doc.paths["/metrics"].get.responses["4XX"];
    const rules = (await redoclyLint(doc)).map((p) => `${p.severity} ${p.ruleId}`);
    expect(rules).toEqual(
      expect.arrayContaining(["error no-empty-servers", "error security-defined", "warn operation-4xx-response"]),
    );
  });
});

describe("the document, with and without tokens", () => {
  it("declares the bearer scheme either way; with tokens the node routes need it and the rest are open", async () => {
    const [plain, withTokens] = await Promise.all(
      [open, guarded].map(async (server) => (await call(`${server.url}/openapi.json`, "GET")).body),
    );
    for (const doc of [plain, withTokens]) {
      expect(doc.components.securitySchemes).toEqual({
        bearer: { type: "http", scheme: "bearer" },
        basic: expect.objectContaining({ type: "http", scheme: "basic" }),
      });
      expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
      for (const path of ["/nodes", "/openapi.json", "/healthz", "/metrics"]) {
        expect(doc.paths[path].get.security, path).toEqual([]);
        expect(Object.keys(doc.paths[path].get.responses), path).toContain("4XX");
      }
    }
    const op = withTokens.paths["/nodes/nft-transactions-by-token"].post;
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["401", "403"]));
  });

  it("lists the input ports a caller must give (not those the operator's credentials can fill)", async () => {
    const doc = (await call(`${open.url}/openapi.json`, "GET")).body;
    const required = (id: string) =>
      doc.paths[`/nodes/${id}`].post.requestBody.content["application/json"].schema.required;
    expect(required("nft-transactions-by-token")).toEqual(["query"]);
    expect(required("nft-transactions-by-contract")).toEqual(["query"]);
    expect(required("nft-transactions-on-chain")).toBeUndefined();
    expect(required("email-send")).toEqual(["request"]);
  });

  it("describes the integers that can go beyond 2^53 in answers with their digit-string form", async () => {
    const doc = (await call(`${open.url}/openapi.json`, "GET")).body;
    const { schemas } = doc.components;
    const digits = { type: ["integer", "string"], pattern: "^-?[0-9]+$" };
    expect(schemas.TransferRecord.properties.quantity).toMatchObject(digits);
    expect(schemas.SaleRecord.properties.quantity).toMatchObject(digits);
    expect(schemas.NftObject.properties.total).toMatchObject(digits);
    expect(schemas.TransferRecord.properties.token_id.anyOf[0]).toMatchObject(digits);
    const recipient = schemas.MessagesSent.properties.Messages.items.properties.To.items;
    expect(recipient.properties.MessageID).toMatchObject(digits);
    expect(recipient.properties.MessageID.description).toContain("?bigint=string");
    // Plain integers stay integers; inputs are what the node accepts (a JSON integer).
    expect(schemas.TransferRecord.properties.block_number.type).toBe("integer");
    const onChain = doc.paths["/nodes/nft-transactions-on-chain"].post.requestBody.content["application/json"].schema;
    expect(onChain.properties.query.properties.from_block.type).toBe("integer");
  });
});
