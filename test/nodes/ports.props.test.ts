/**
 * Property-based tests over every node's input ports, through `runNode` against the local NFTPort and Mailjet
 * servers (which count every request they get). For any input: `runNode` never throws, the output holds only the
 * node's documented ports (its success port or `error`, and `response`), no error is `internal`, and an input
 * refused as `invalid_input` sent nothing upstream. Generated valid input is never refused; generated invalid
 * input (each way a value can break a rule, and values no schema names: cycles, functions, deep nesting, keys like
 * `__proto__`) always is.
 *
 * `npm test` runs PROPS_RUNS (default 150) cases per property with a fixed seed (PROPS_SEED, default 20261122);
 * `npm run test:props` runs 10,000 (about 120,000 inputs, a minute or two).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/core/json.js";
import { type AnyNode, runNode } from "../../src/core/node.js";
import { nodes } from "../../src/nodes/index.js";
import { testConfig } from "../support/helpers.js";
import { API_KEY, type MailjetServer, SECRET_KEY, startMailjet } from "../upstreams/mailjet.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_721, CONTRACT_1155, standardDataset } from "../upstreams/nftport-data.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 150);
const SEED = Number(process.env.PROPS_SEED ?? 20261122);
const settings = { numRuns: RUNS, seed: SEED };
// The larger script runs thousands of cases: give each property the time it needs.
const TIMEOUT_MS = Math.max(30_000, RUNS * 40);

let nftport: NftportServer;
let mailjet: MailjetServer;
let config: ReturnType<typeof testConfig>;

beforeAll(async () => {
  [nftport, mailjet] = await Promise.all([startNftport(standardDataset(60)), startMailjet()]);
  config = testConfig({
    NFTPORT_BASE_URL: nftport.url,
    MAILJET_BASE_URL: mailjet.url,
    CHAINMAIL_MAX_RETRIES: "0",
    CHAINMAIL_TIMEOUT_MS: "5000",
  });
});
afterAll(() => Promise.all([nftport.close(), mailjet.close()]));

const upstreamCalls = () => nftport.requests.length + mailjet.requests.length;

// ---- valid input, from the port schemas ----

const HEX = "0123456789abcdefABCDEF".split("");
const address = fc
  .array(fc.constantFrom(...HEX), { minLength: 40, maxLength: 40 })
  .map((digits) => `0x${digits.join("")}`);
const knownContract = fc.oneof(fc.constantFrom(CONTRACT_721, CONTRACT_1155), address);
const tokenId = fc.oneof(fc.constantFrom("1", "2", "7"), fc.stringMatching(/^[0-9]{1,78}$/));
// Any Unicode: it goes into a URL, percent-encoded.
const continuation = fc.string({ unit: "binary", maxLength: 1024 });
/** Any UTF-16 code unit, lone surrogates included (JSON text can hold them as `\ud800`). */
const codeUnits = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength });
const loneSurrogate = fc
  .tuple(codeUnits(10), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 10 }))
  .map(([before, c, after]) => `${before}${String.fromCharCode(c)}${after}`)
  .filter((text) => !(text as unknown as { isWellFormed(): boolean }).isWellFormed());
const pageSize = fc.integer({ min: 1, max: 1000 });
const uint64 = fc.oneof(
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n }),
);
/** A type filter: each kind at most once. */
const types = (kinds: readonly string[]) => fc.uniqueArray(fc.constantFrom(...kinds), { maxLength: kinds.length });

/** Characters an HTTP header value carries; a key is visible at both ends, spaces and tabs only inside. */
const visible = fc.oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }));
const inside = fc.oneof(visible, fc.constantFrom(0x20, 0x09));
const headerSafeKey = fc
  .tuple(visible, fc.array(inside, { maxLength: 60 }), visible)
  .map(([first, middle, last]) => String.fromCharCode(first, ...middle, last));
const apiKey = fc.oneof(
  fc.constant(VALID_KEY),
  headerSafeKey,
  fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
);
const nftParams = fc.record({ api_key: apiKey, chain: fc.constant("ethereum") }, { requiredKeys: ["api_key"] });

const byContract = fc.record({
  query: fc.record(
    {
      contract_address: knownContract,
      page_size: pageSize,
      continuation,
      type: types(["transfer", "mint", "burn", "bid", "list", "sale", "all"]),
    },
    { requiredKeys: ["contract_address"] },
  ),
  params: nftParams,
});
const byToken = fc.record({
  query: fc.record(
    {
      contract_address: knownContract,
      token_id: tokenId,
      page_size: pageSize,
      continuation,
      type: types(["transfer", "mint", "burn", "sale", "all"]),
    },
    { requiredKeys: ["contract_address", "token_id"] },
  ),
  params: nftParams,
});
const onChain = fc
  .tuple(
    fc.record(
      { page_size: pageSize, continuation, type: types(["transfer", "mint", "burn", "sale", "all"]) },
      { requiredKeys: [] },
    ),
    fc.option(fc.tuple(uint64, uint64), { nil: undefined }),
    fc.constantFrom("both", "from", "to"),
    nftParams,
  )
  .map(([query, range, which, params]) => {
    if (range) {
      const [low, high] = range[0] <= range[1] ? range : [range[1], range[0]];
      if (which !== "to") Object.assign(query, { from_block: low });
      if (which !== "from") Object.assign(query, { to_block: high });
    }
    return { query, params };
  });

const email = fc
  .tuple(
    fc.stringMatching(/^[a-z0-9]{1,12}(\.[a-z0-9+_-]{1,8})?$/),
    fc.constantFrom("chainmail.test", "example.com", "example.org", "mail.example.net"),
  )
  .map(([local, domain]) => `${local}@${domain}`);
const recipient = fc.record({ Email: email, Name: fc.string({ maxLength: 40 }) }, { requiredKeys: ["Email"] });
const base64 = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString("base64"));
const message = fc
  .record(
    {
      From: recipient,
      To: fc.array(recipient, { minLength: 1, maxLength: 4 }),
      Cc: fc.array(recipient, { maxLength: 3 }),
      Bcc: fc.array(recipient, { maxLength: 3 }),
      Subject: fc.string({ maxLength: 255 }),
      TextPart: fc.string({ maxLength: 200 }),
      HTMLPart: fc.string({ maxLength: 200 }),
      TemplateID: fc.integer({ min: 1, max: 2 ** 31 }),
      Variables: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 4 }),
      Headers: fc.dictionary(fc.stringMatching(/^X-Custom-[A-Za-z0-9-]{1,20}$/), fc.string({ maxLength: 40 }), {
        maxKeys: 3,
      }),
      Attachments: fc.array(
        fc.record({ ContentType: fc.constant("text/plain"), Filename: fc.constant("a.txt"), Base64Content: base64 }),
        { maxLength: 2 },
      ),
      CustomID: fc.string({ maxLength: 40 }),
      URLTags: fc.string({ maxLength: 256 }),
    },
    { requiredKeys: ["From", "To"] },
  )
  // One of TextPart, HTMLPart or TemplateID is required (the message rules); TextPart when none was drawn.
  .map((m) => ((m.TextPart ?? m.HTMLPart ?? m.TemplateID) === undefined ? { ...m, TextPart: "Hello" } : m));
// Credentials: anything but control characters (they go into a login Base64-encoded), beyond Latin-1 included.
const noControl = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xd7ff }))
    .map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 64,
});
const emailInput = fc.record({
  params: fc.oneof(
    fc.constant({ "user id": API_KEY, password: SECRET_KEY }),
    fc.record({ "user id": noControl.filter((s) => !s.includes(":")), password: noControl }),
  ),
  request: fc.record(
    { Messages: fc.array(message, { minLength: 1, maxLength: 4 }), SandboxMode: fc.constant(true) },
    { requiredKeys: ["Messages"] },
  ),
});

const validInputs: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  "nft-transactions-by-contract": byContract,
  "nft-transactions-on-chain": onChain,
  "nft-transactions-by-token": byToken,
  "email-send": emailInput,
};

// ---- invalid input: a valid one, broken in one way that surely breaks a rule ----

type Input = Record<string, unknown>;
type Breakage = (input: Input) => fc.Arbitrary<Input>;

const clone = (input: Input): Input => structuredClone(input);
/** Sets `path` in a copy of `input` (creating objects on the way) to `value`, defined as an own property. */
function setAt(input: Input, path: string[], value: unknown): Input {
  const copy = clone(input);
  let at: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof at[key] !== "object" || at[key] === null) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  Object.defineProperty(at, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}
const nest = (depth: number, leaf: unknown = 0): unknown => {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { v: value };
  return value;
};
const circular = () => {
  const value: Record<string, unknown> = { a: 1 };
  value.self = { back: value };
  return value;
};
/** Values JSON cannot hold, or that no schema field takes where they land. */
const alien = fc.oneof(
  fc.constant(() => 1),
  fc.constant(Symbol("s")),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(new Date(0)),
  fc.constant(new Map([["a", 1]])),
  fc.constant(null).map(circular),
  fc.integer({ min: MAX_JSON_DEPTH, max: 5000 }).map((depth) => nest(depth)),
);
const notAPort = fc.oneof(
  fc.constantFrom("constructor", "__proto__", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf"),
  fc.string({ minLength: 1, maxLength: 12 }),
);
/** A string no HTTP header can carry: a control character or one beyond U+00FF somewhere in it. */
const unsendable = fc
  .tuple(
    fc.string({ maxLength: 20 }),
    fc.oneof(
      fc.integer({ min: 0, max: 0x1f }).filter((c) => c !== 0x09),
      fc.constant(0x7f),
      fc.integer({ min: 0x100, max: 0xffff }),
    ),
    fc.string({ maxLength: 20 }),
  )
  .map(([before, c, after]) => `${before}${String.fromCharCode(c)}${after}`);

const QUERY_FIELDS = new Set([
  "contract_address",
  "token_id",
  "page_size",
  "continuation",
  "type",
  "from_block",
  "to_block",
]);
/** A string with a line break or another control character in it. */
const withControl = fc
  .tuple(
    fc.string({ maxLength: 20 }),
    fc.oneof(fc.integer({ min: 0, max: 0x1f }), fc.constant(0x7f)),
    fc.string({ maxLength: 20 }),
  )
  .map(([before, c, after]) => `${before}${String.fromCharCode(c)}${after}`);

const common: Breakage[] = [
  (input) =>
    fc
      .tuple(notAPort, fc.jsonValue())
      .map(([key, value]) => setAt(input, [Object.hasOwn(input, key) ? "not a port" : key], value)),
  (input) => fc.constantFrom(...Object.keys(input)).chain((port) => alien.map((value) => setAt(input, [port], value))),
  (input) =>
    fc
      .constantFrom(...Object.keys(input))
      .chain((port) =>
        fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant([])).map((v) => setAt(input, [port], v)),
      ),
];
const retriever: Breakage[] = [
  ...common,
  (input) => unsendable.map((key) => setAt(input, ["params", "api_key"], key)),
  (input) => fc.string({ minLength: 1025, maxLength: 1500 }).map((key) => setAt(input, ["params", "api_key"], key)),
  (input) =>
    fc
      .oneof(
        fc.integer({ max: 0 }),
        fc.integer({ min: 1001 }),
        fc.double({ noInteger: true }),
        fc.constantFrom(1e21, 1e308, 10n ** 21n),
      )
      .map((size) => setAt(input, ["query", "page_size"], size)),
  (input) => fc.string({ minLength: 1025, maxLength: 1500 }).map((c) => setAt(input, ["query", "continuation"], c)),
  (input) => fc.constantFrom("ethereum ", "polygon", "").map((chain) => setAt(input, ["params", "chain"], chain)),
  (input) =>
    fc
      .tuple(notAPort, fc.jsonValue())
      .map(([key, v]) => setAt(input, ["query", QUERY_FIELDS.has(key) ? "unknown_field" : key], v)),
  (input) => fc.constantFrom("approve", "ALL", "").map((kind) => setAt(input, ["query", "type"], [kind])),
  // A kind given twice, wherever in the list.
  (input) =>
    fc
      .tuple(fc.constantFrom("transfer", "mint", "burn", "sale", "all"), fc.nat(), fc.nat())
      .map(([kind, at, again]) => {
        const given = [...((input.query as { type?: string[] }).type ?? [])].filter((k) => k !== kind);
        given.splice(at % (given.length + 1), 0, kind);
        given.splice(again % (given.length + 1), 0, kind);
        return setAt(input, ["query", "type"], given);
      }),
  (input) => alien.map((value) => setAt(input, ["query", "continuation"], value)),
  (input) => loneSurrogate.map((text) => setAt(input, ["query", "continuation"], text)),
];
const withAddress: Breakage[] = [
  ...retriever,
  (input) =>
    fc
      .oneof(
        fc.string({ maxLength: 50 }),
        address.map((a) => `${a}0`),
        address.map((a) => a.slice(1)),
      )
      .map((a) => setAt(input, ["query", "contract_address"], a)),
];
const invalidInputs: Record<string, Breakage[]> = {
  "nft-transactions-by-contract": withAddress,
  "nft-transactions-by-token": [
    ...withAddress,
    (input) =>
      fc
        .oneof(fc.stringMatching(/^[0-9]{79,90}$/), fc.constantFrom("-1", "1.5", "0x1", ""), fc.integer())
        .map((t) => setAt(input, ["query", "token_id"], t)),
  ],
  "nft-transactions-on-chain": [
    ...retriever,
    (input) =>
      fc
        .oneof(fc.integer({ max: -1 }), fc.constantFrom(1e21, 2n ** 64n, 0.5, "12"))
        .chain((block) =>
          fc.constantFrom("from_block", "to_block").map((field) => setAt(input, ["query", field], block)),
        ),
    (input) =>
      fc.tuple(uint64, fc.integer({ min: 1, max: 1000 })).map(([low, gap]) => {
        const high = typeof low === "bigint" ? low + BigInt(gap) : low + gap;
        const broken = setAt(input, ["query", "from_block"], high);
        return setAt(broken, ["query", "to_block"], low);
      }),
  ],
  "email-send": [
    ...common,
    (input) =>
      withControl.chain((bad) =>
        fc.constantFrom("user id", "password").map((field) => setAt(input, ["params", field], bad)),
      ),
    (input) => fc.constant(setAt(input, ["params", "user id"], "key:with-colon")),
    (input) =>
      fc
        .constantFrom("not an address", "a@b", "@example.com", "")
        .map((bad) => setAt(input, ["request", "Messages", "0", "From", "Email"], bad)),
    (input) =>
      fc
        .constantFrom("From", "Subject", "Message-Id", "Date")
        .map((name) => setAt(input, ["request", "Messages", "0", "Headers"], { [name]: "x" })),
    (input) => fc.constant(setAt(input, ["request", "Messages"], [])),
    (input) => alien.map((value) => setAt(input, ["request", "Messages", "0", "Variables"], { v: value })),
    (input) =>
      fc
        .string({ minLength: 256, maxLength: 300 })
        .map((s) => setAt(input, ["request", "Messages", "0", "Subject"], s)),
    (input) => fc.constantFrom(false, "true", 1).map((v) => setAt(input, ["request", "SandboxMode"], v)),
    (input) => loneSurrogate.map((text) => setAt(input, ["request", "Messages", "0", "TextPart"], text)),
  ],
};

/** Runs the node and checks what holds for any input; returns the output and how many upstream requests it made. */
async function runChecked(node: AnyNode, input: unknown) {
  const before = upstreamCalls();
  let out: Record<string, unknown> & { error?: { error: string; details: { code: string } } };
  try {
    out = (await runNode(node, input, { config })) as typeof out;
  } catch (err) {
    throw new Error(`runNode threw: ${(err as Error).stack}`);
  }
  const ports = Object.keys(out);
  for (const port of ports) expect(Object.keys(node.outputs)).toContain(port);
  expect(node.successPort in out || "error" in out).toBe(true);
  if (out.error) {
    expect(typeof out.error.error).toBe("string");
    expect(out.error.details.code).not.toBe("internal");
  }
  const sent = upstreamCalls() - before;
  if (out.error?.details.code === "invalid_input") {
    expect(sent).toBe(0);
    expect(ports).toEqual(["error"]);
  }
  return { out, sent };
}

describe.each(Object.values(nodes).map((node) => [node.id, node] as const))("%s: input ports", (id, node) => {
  it(
    "valid input is never refused as invalid_input",
    async () => {
      await fc.assert(
        fc.asyncProperty(validInputs[id]!, async (input) => {
          const { out } = await runChecked(node, input);
          if (out.error) expect(out.error.details.code, out.error.error).not.toBe("invalid_input");
        }),
        settings,
      );
    },
    TIMEOUT_MS,
  );

  it(
    "input broken in any one way is invalid_input, and nothing is sent",
    async () => {
      const broken = validInputs[id]!.chain((input) =>
        fc.oneof(...invalidInputs[id]!.map((breakage) => breakage(input))),
      );
      await fc.assert(
        fc.asyncProperty(broken, async (input) => {
          const { out, sent } = await runChecked(node, input);
          expect(out.error?.details.code).toBe("invalid_input");
          expect(sent).toBe(0);
        }),
        settings,
      );
    },
    TIMEOUT_MS,
  );

  it(
    "anything at all as the input or as a port: no throw, documented ports, nothing sent unless valid",
    async () => {
      const anything = fc.anything({
        withNullPrototype: true,
        withBigInt: true,
        withDate: true,
        withMap: true,
        withSet: true,
        withTypedArray: true,
        withSparseArray: true,
        withBoxedValues: true,
        withObjectString: true,
        maxDepth: 4,
      });
      const ports = Object.keys(node.inputs);
      const input = fc.oneof(
        anything,
        fc.dictionary(fc.oneof(fc.constantFrom(...ports), notAPort), anything, { maxKeys: 4 }),
      );
      await fc.assert(
        fc.asyncProperty(input, async (value) => {
          await runChecked(node, value);
        }),
        settings,
      );
    },
    TIMEOUT_MS,
  );
});
