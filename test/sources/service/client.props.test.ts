/**
 * NFT_SOURCE=service (src/sources/service/client.ts) reads another chainmail's answers: whatever such a service
 * answers (any status, any body, a node output of any shape), the retriever resolves to `data` or `error`, never
 * throws, never reports `internal`, and passes `data` on only when it is a retriever's page.
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 150).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringifyJson } from "../../../src/core/json.js";
import { runNode } from "../../../src/core/node.js";
import { nftTransactionsByContract } from "../../../src/nodes/index.js";
import { testConfig } from "../../support/helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 150);
const SEED = Number(process.env.PROPS_SEED ?? 21);
let next: { status: number; body: string } = { status: 200, body: "" };
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(next.status, { "content-type": "application/json" });
      res.end(next.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const page = fc.record(
  {
    response: fc.oneof(fc.constant("OK"), fc.string()),
    transactions: fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.jsonValue()),
    continuation: fc.oneof(fc.string(), fc.jsonValue()),
  },
  { requiredKeys: [] },
);
const output = fc.record(
  {
    data: fc.oneof(page, fc.jsonValue()),
    response: fc.oneof(fc.record({ status: fc.integer(), headers: fc.object(), body: fc.string() }), fc.jsonValue()),
    error: fc.oneof(
      fc.record({ error: fc.string(), details: fc.record({ code: fc.string() }, { requiredKeys: [] }) }),
      fc.jsonValue(),
    ),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  output.map((value) => stringifyJson(value)),
  fc.jsonValue().map((value) => JSON.stringify(value) ?? ""),
  fc.string(),
);

describe("a chainmail service's answers, whatever they are", () => {
  it("give data or error, never a throw, never `internal`; data only when it is a page", async () => {
    const config = testConfig({ NFT_SOURCE: "service", CHAINMAIL_SERVICE_URL: url, CHAINMAIL_MAX_RETRIES: "0" });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(200, 400, 401, 403, 404, 500, 502, 504), body, async (status, text) => {
        next = { status, body: text };
        const out = await runNode(
          nftTransactionsByContract,
          { query: { contract_address: "0x1111111111111111111111111111111111111111" } },
          { config },
        );
        expect(Object.keys(out).every((port) => ["data", "response", "error"].includes(port))).toBe(true);
        expect(out.data === undefined).toBe(out.error !== undefined);
        if (out.error) expect(out.error.details.code).not.toBe("internal");
        if (out.data) {
          expect(out.data.response).toBe("OK");
          expect(Array.isArray(out.data.transactions)).toBe(true);
          expect(typeof out.data.continuation).toBe("string");
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
