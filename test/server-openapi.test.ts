/** The OpenAPI 3.1 document: valid per a real validator, generated from the node port schemas. */
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeNode } from "../src/core/node.js";
import { nodes } from "../src/nodes/index.js";
import { type RunningServer, startServer } from "../src/server/index.js";
import { testConfig } from "./helpers.js";
import { call } from "./server-helpers.js";

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
      expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "408", "413", "500", "502", "504"]);
      const output = op.responses["200"].content["application/json"].schema;
      expect(Object.keys(output.properties)).toEqual(Object.keys(node.outputs));
      expect(op.security).toBeUndefined();
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
