/**
 * A credential never comes out, wherever it was put: property-based over misplacements of a key (as a port itself,
 * inside arrays and objects, under misspelt or unknown names, in `query` or `request`, as the operator's own key in
 * any field) through every node against the local NFTPort and Mailjet servers. The output never holds the key, and
 * an `invalid_input` names where it was. The same misplacements through the command line and the service (answers
 * and logs).
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases per node (default 200).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringifyJson } from "../../src/core/json.js";
import { runNode } from "../../src/core/node.js";
import { mayBeSecret } from "../../src/core/validate.js";
import { nodes } from "../../src/nodes/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { runCli, testConfig } from "../support/helpers.js";
import { call, logCapture } from "../support/server-helpers.js";
import { API_KEY, type MailjetServer, SECRET_KEY, startMailjet } from "../upstreams/mailjet.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_721, standardDataset } from "../upstreams/nftport-data.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 200);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);

/** An OpenSea API key the operator configured (never called here: the retrievers read NFTPort). */
const OPENSEA_KEY = "5b0e6f2a9c8d4e1fa7b3c2d1e0f9a8b7";

let nftport: NftportServer;
let mailjet: MailjetServer;
let env: Record<string, string>;

beforeAll(async () => {
  [nftport, mailjet] = await Promise.all([startNftport(standardDataset(20)), startMailjet()]);
  env = {
    NFTPORT_BASE_URL: nftport.url,
    MAILJET_BASE_URL: mailjet.url,
    CHAINMAIL_MAX_RETRIES: "0",
    // The operator's own credentials: they must never come out either, wherever a caller repeats them.
    NFTPORT_API_KEY: VALID_KEY,
    MAILJET_API_KEY: API_KEY,
    MAILJET_SECRET_KEY: SECRET_KEY,
    OPENSEA_API_KEY: OPENSEA_KEY,
  };
});
afterAll(() => Promise.all([nftport.close(), mailjet.close()]));

const message = { From: { Email: "a@chainmail.test" }, To: [{ Email: "b@example.com" }], TextPart: "hi" };
/** A valid input of each node: the key is put somewhere into it. */
const BASE: Record<string, Record<string, unknown>> = {
  "nft-transactions-by-contract": { query: { contract_address: CONTRACT_721, page_size: 2 } },
  "nft-transactions-by-token": { query: { contract_address: CONTRACT_721, token_id: "1" } },
  "nft-transactions-on-chain": { query: { page_size: 2 } },
  "email-send": { request: { Messages: [message], SandboxMode: true } },
};

/** Keys as they come: UUIDs, hex, base64, with a marker that no answer holds by chance. */
const key = fc
  .tuple(
    fc.constantFrom("", "sk_live_", "Bearer ", "pk-"),
    fc.stringMatching(/^[A-Za-z0-9+/_=-]{12,48}$/),
    fc.constantFrom("", "\n", " ", "é"),
  )
  .map(([prefix, body, suffix]) => `${prefix}Zq9${body}${suffix}`);
/** Names a key is found under when it is misplaced. */
const secretName = fc.constantFrom(
  "api_key",
  "apikey",
  "apiKey",
  "API-KEY",
  "key",
  "token",
  "secret",
  "password",
  "passwd",
  "user id",
  "Authorization",
  "credentials",
);
/** The key as it is given: itself, or wrapped in arrays and objects. */
const wrapped = (k: string) =>
  fc
    .array(fc.oneof(fc.constant("array" as const), fc.tuple(fc.constant("object" as const), secretName)), {
      maxLength: 3,
    })
    .map((wraps) => wraps.reduce<unknown>((v, w) => (w === "array" ? [v] : { [w[1]]: v }), k));

interface Placement {
  input: Record<string, unknown>;
  /** The field an invalid_input must name (or a field within it). */
  where: string;
}

/** A misplacement of `k` in a valid input of `id`. */
function misplacements(id: string, k: string): fc.Arbitrary<Placement> {
  const base = structuredClone(BASE[id]!);
  const inside = id === "email-send" ? "request" : "query";
  const with_ = (port: string, value: unknown) => ({ ...base, [port]: value });
  return fc.oneof(
    // The port that holds credentials given the key itself, or the key wrapped.
    wrapped(k).map((v) => ({ input: with_("params", v), where: "params" })),
    // Under a wrong or misspelt name in params, or as the right name's value wrapped.
    fc.tuple(secretName, wrapped(k)).map(([name, v]) => ({ input: with_("params", { [name]: v }), where: "params" })),
    fc.tuple(fc.array(fc.constant(0), { minLength: 1, maxLength: 3 }), wrapped(k)).map(([depth, v]) => {
      const value = depth.reduce<unknown>((acc) => [acc], v);
      const name = id === "email-send" ? "password" : "api_key";
      return { input: with_("params", { [name]: value }), where: `params.${name}` };
    }),
    // Under a secret-looking name in the other port.
    fc.tuple(secretName, wrapped(k)).map(([name, v]) => ({
      input: with_(inside, { ...(base[inside] as object), [name]: v }),
      where: inside,
    })),
    // As a port of its own, or as the whole input.
    wrapped(k).map((v) => ({ input: { ...base, api_key: v }, where: "api_key" })),
    fc.constantFrom(k, [k]).map((v) => ({ input: v as unknown as Record<string, unknown>, where: "(input)" })),
  );
}

describe.each(Object.keys(BASE))("%s: a misplaced key", (id) => {
  it("never appears in the output; invalid_input says where it was", async () => {
    const node = nodes[id]!;
    const config = testConfig(env);
    await fc.assert(
      fc.asyncProperty(
        key.chain((k) => misplacements(id, k).map((p) => ({ k, ...p }))),
        async ({ k, input, where }) => {
          const out = await runNode(node, input, { config });
          expect(stringifyJson(out)).not.toContain(k.trim());
          // `request` passes fields it does not know on to the provider, as Mailjet's API does: there it may be
          // accepted. Anything refused names where the key was.
          if (id !== "email-send" || where !== "request") expect(out.error?.details.code).toBe("invalid_input");
          if (out.error?.details.code !== "invalid_input") return;
          const fields = (out.error.details.violations as { field: string }[]).map((v) => v.field);
          expect(fields.some((f) => f === where || f.startsWith(`${where}.`) || f.startsWith(`${where}[`))).toBe(true);
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

describe("the operator's own key, given in a field where it is wrong", () => {
  it("never comes back in the error that refuses it, nor in the upstream's answer", async () => {
    const config = testConfig(env);
    const fields = [
      ["nft-transactions-by-token", "query", "contract_address"],
      ["nft-transactions-by-token", "query", "token_id"],
      ["nft-transactions-by-contract", "query", "continuation"],
      ["nft-transactions-on-chain", "query", "continuation"],
      ["email-send", "request", "From"],
    ] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...fields),
        fc.constantFrom(VALID_KEY, API_KEY, SECRET_KEY, OPENSEA_KEY),
        async ([id, port, field], secret) => {
          const input = structuredClone(BASE[id]!) as Record<string, Record<string, unknown>>;
          if (id === "email-send")
            (input.request!.Messages as Record<string, unknown>[])[0]![field] = { Email: secret };
          else input[port]![field] = secret;
          const out = await runNode(nodes[id]!, input, { config });
          expect(out.error).toBeDefined();
          expect(stringifyJson(out)).not.toContain(secret);
        },
      ),
      { numRuns: 40, seed: SEED },
    );
  });
});

describe("the caller's own key, repeated where it is wrong", () => {
  it("is redacted from the refusal; what params holds that is no secret (the chain) is not", async () => {
    const k = "Zq9-caller-key-0123456789";
    const out = await runNode(
      nodes["nft-transactions-by-token"]!,
      { query: { contract_address: k, token_id: "1" }, params: { api_key: k, chain: "ethereum" } },
      { config: testConfig(env) },
    );
    expect(out.error?.error).toBe(
      'Invalid input (1 problem): query.contract_address = "[REDACTED]" is invalid: must be an address: 0x followed by 40 hex digits',
    );
    const chain = await runNode(
      nodes["nft-transactions-by-token"]!,
      { query: { contract_address: "0xethereum", token_id: "1" }, params: { api_key: k, chain: "ethereum" } },
      { config: testConfig(env) },
    );
    expect(chain.error?.error).toContain('query.contract_address = "0xethereum" is invalid');
  });
});

describe("through the command line and the service", () => {
  const K = "Zq9-4f1c2e8a-1b2c-4d5e-8f90-a1b2c3d4e5f6";
  const q = { contract_address: CONTRACT_721, token_id: "1" };
  const cases: [string, string, unknown][] = [
    ["nft-transactions-by-token", "params itself", { query: q, params: K }],
    ["nft-transactions-by-token", "params as [key]", { query: q, params: [K] }],
    ["nft-transactions-by-token", "params.api_key as [key]", { query: q, params: { api_key: [K] } }],
    ["nft-transactions-by-token", "query.api_key", { query: { ...q, api_key: K } }],
    ["nft-transactions-by-token", "params.apikey", { query: q, params: { apikey: K } }],
    ["email-send", "params itself", { request: { Messages: [message] }, params: K }],
    [
      "email-send",
      "params.password as [key]",
      { request: { Messages: [message] }, params: { "user id": "u", password: [K] } },
    ],
  ];

  let server: RunningServer;
  const logs = logCapture();
  beforeAll(async () => {
    server = await startServer({
      port: 0,
      config: testConfig(env),
      logger: { stream: logs.stream },
      tokens: ["t0k-0123456789abcdef"],
    });
  });
  afterAll(() => server?.close());

  it.each(cases)("%s, the key as %s: the answer, the output and the logs never hold it", async (id, _, input) => {
    const answer = await call(`${server.url}/nodes/${id}`, "POST", input as object, {
      authorization: "Bearer t0k-0123456789abcdef",
    });
    expect(answer.status).toBe(400);
    expect(answer.text).not.toContain(K);
    const cli = await runCli(["run", id, "--input", JSON.stringify(input)], { env });
    expect(cli.code).toBe(1);
    expect(cli.stdout + cli.stderr).not.toContain(K);
    expect(JSON.parse(cli.stdout).error.details.code).toBe("invalid_input");
    expect(logs.lines.join("")).not.toContain(K);
  });
});

describe("names that say a field holds a credential", () => {
  it("are told apart from the fields whose values are shown", () => {
    const secret = ["api_key", "apiKey", "API-KEY", "key", "password", "passwd", "user id", "Authorization"];
    const more = ["access_token", "secretKey", "client_secret", "credentials", "x-api-key", 'params["user id"]'];
    for (const name of [...secret, ...more])
      expect({ name, hidden: mayBeSecret(name) }).toEqual({ name, hidden: true });
    const shown = ["token_id", "contract_address", "page_size", "continuation", "chain", "Email", "Subject", "type"];
    for (const name of [...shown, "query.token_id", "request.Messages[0].To[0].Email", "from_block"])
      expect({ name, hidden: mayBeSecret(name) }).toEqual({ name, hidden: false });
  });
});
