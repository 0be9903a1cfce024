/**
 * `?bigint=string` on `POST /nodes/<node-id>`: integers beyond 2^53 as strings of decimal digits for clients whose
 * JSON parser would round them; the default and `?bigint=number` keep bare JSON integers. Over real sockets,
 * against the local NFTPort-compatible server.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { bigintForm } from "../../src/server/integers.js";
import { testConfig } from "../support/helpers.js";
import { call } from "../support/server-helpers.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_1155, HUGE_QUANTITY, HUGE_TOKEN, standardDataset } from "../upstreams/nftport-data.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);
const BY_TOKEN = "/nodes/nft-transactions-by-token";
const input = {
  query: { contract_address: CONTRACT_1155, token_id: HUGE_TOKEN, type: ["mint"] },
  params: { api_key: VALID_KEY },
};

let upstream: NftportServer;
let server: RunningServer;

beforeAll(async () => {
  upstream = await startNftport(standardDataset());
  server = await startServer({ port: 0, config: testConfig({ NFTPORT_BASE_URL: upstream.url }) });
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

describe("?bigint on a node route", () => {
  it("string: integers beyond 2^53 are digit strings that JSON.parse keeps exact; safe ones stay numbers", async () => {
    const res = await call(`${server.url}${BY_TOKEN}?bigint=string`, "POST", input);
    expect(res.status).toBe(200);
    const record = JSON.parse(res.text).data.transactions[0];
    expect(record.quantity).toBe(HUGE_QUANTITY.toString());
    expect(typeof record.block_number).toBe("number");
    // The raw upstream answer is a string already, untouched.
    expect(JSON.parse(res.text).response.body).toContain(`"quantity":${HUGE_QUANTITY}`);
  });

  it("number, and no parameter: bare JSON integers, every digit", async () => {
    for (const suffix of ["", "?bigint=number"]) {
      const res = await call(`${server.url}${BY_TOKEN}${suffix}`, "POST", input);
      expect(res.status, suffix).toBe(200);
      expect(res.text).toContain(`"quantity":${HUGE_QUANTITY}`);
      expect(res.body.data.transactions[0].quantity).toBe(HUGE_QUANTITY);
    }
  });

  it("anything else is invalid_input naming the parameter, before anything is sent upstream", async () => {
    const before = upstream.requests.length;
    for (const suffix of ["?bigint=strings", "?bigint=", "?bigint=string&bigint=string", "?bigint=%00"]) {
      const res = await call(`${server.url}${BY_TOKEN}${suffix}`, "POST", input);
      expect(res.status, suffix).toBe(400);
      expect(res.body.error.details.code).toBe("invalid_input");
      expect(res.body.error.details.violations[0]).toMatchObject({ field: "?bigint", rule: "one of: number, string" });
    }
    expect(upstream.requests.length).toBe(before);
  });
});

describe("bigintForm (property)", () => {
  it("accepts exactly `number` and `string`, and answers any other query with invalid_input, never throwing", () => {
    const value = fc.oneof(
      fc.constantFrom("number", "string", "String", " string"),
      fc.string(),
      fc.anything({ withNullPrototype: true }),
    );
    const query = fc.oneof(
      fc.anything({ withNullPrototype: true }),
      fc.dictionary(fc.constantFrom("bigint", "other", "__proto__"), value),
      value.map((bigint) => ({ bigint })),
    );
    fc.assert(
      fc.property(query, (q) => {
        const result = bigintForm(q);
        const given =
          typeof q === "object" && q !== null && Object.hasOwn(q, "bigint")
            ? (q as { bigint: unknown }).bigint
            : undefined;
        if (given === undefined) expect(result).toEqual({ form: "number" });
        else if (given === "number" || given === "string") expect(result).toEqual({ form: given });
        else {
          expect("error" in result && result.error.details.code).toBe("invalid_input");
          expect("error" in result && result.error.error.length).toBeLessThan(200);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
