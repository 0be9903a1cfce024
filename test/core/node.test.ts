/**
 * src/core/node.ts on its own, with small nodes defined here: `runNodeWith` reads an input as untrusted (an object
 * keyed by port, only its own keys, values copied as JSON data), reports every violation at once, fills defaults,
 * lets `prepare` fill the operator's ports, runs `check` only over readable ports, turns anything `run` throws into
 * the `error` port, and scrubs every credential (the config's and those given in a secret port) out of an error.
 * `runNode` without a config takes this process's; `describeNode` is the plain JSON form. The real nodes are
 * test/nodes/.
 */
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/core/config.js";
import { ChainmailError } from "../../src/core/errors.js";
import { defineNode, describeNode, type RunContext, runNode, runNodeWith } from "../../src/core/node.js";
import { ErrorPayloadSchema } from "../../src/schemas/common.js";
import { testConfig } from "../support/helpers.js";

const OPERATOR_KEY = "operator-key-0123456789";

/** A node echoing what `run` got; `fail` makes run throw it; `calls` counts runs. */
function echo(fail?: () => unknown) {
  const seen: { values: unknown[]; calls: number } = { values: [], calls: 0 };
  const node = defineNode({
    id: "test-echo",
    version: "v0",
    title: "Echo",
    description: "Echoes its input",
    inputs: {
      query: Type.Object(
        {
          from: Type.Integer({ minimum: 0 }),
          to: Type.Integer({ minimum: 0 }),
          size: Type.Optional(Type.Integer({ default: 50 })),
        },
        { additionalProperties: false },
      ),
      params: Type.Object(
        { api_key: Type.String({ minLength: 1, "x-secret": true }), chain: Type.Optional(Type.String()) },
        { additionalProperties: false, "x-secret": true },
      ),
    },
    outputs: { data: Type.Unknown(), error: ErrorPayloadSchema },
    successPort: "data",
    filledByOperator: ["params"],
    prepare: (input, ctx) => ({
      ...input,
      params: { api_key: ctx.config.nftport.apiKey, ...(input.params as object | undefined) },
    }),
    check: ({ query }) =>
      query.from <= query.to
        ? []
        : [{ field: "query.from", rule: "<= query.to", message: "query.from must not be past query.to" }],
    run: async (input) => {
      seen.calls++;
      seen.values.push(input);
      if (fail) throw fail();
      return { data: input };
    },
  });
  return { node, seen };
}

const ctx: RunContext = { config: testConfig({ NFTPORT_API_KEY: OPERATOR_KEY }) };
const violations = (out: { error?: { details: Record<string, unknown> } }) =>
  (out.error?.details.violations as { field: string }[] | undefined)?.map((v) => v.field);

describe("runNodeWith: the input", () => {
  it("runs with defaults filled and the operator's port prepared from the config", async () => {
    const { node, seen } = echo();
    const out = await runNodeWith(node, { query: { from: 1, to: 2 } }, ctx);
    expect(out).toEqual({ data: { query: { from: 1, to: 2, size: 50 }, params: { api_key: OPERATOR_KEY } } });
    expect(seen.calls).toBe(1);
    // A caller's own key wins over the operator's.
    expect((await runNodeWith(node, { query: { from: 0, to: 0 }, params: { api_key: "mine" } }, ctx)).data).toEqual({
      query: { from: 0, to: 0, size: 50 },
      params: { api_key: "mine" },
    });
  });

  it("refuses anything but a plain object keyed by port, without running", async () => {
    const { node, seen } = echo();
    class Input {
      query = { from: 1, to: 2 };
    }
    for (const input of [null, undefined, 42, "query", [{ query: {} }], new Input(), new Map()]) {
      const out = await runNodeWith(node, input, ctx);
      expect(out.error?.details.code).toBe("invalid_input");
      expect(violations(out)).toEqual(["(input)"]);
      expect(out.error?.error).toContain("keyed by input port (query, params)");
    }
    // A null-prototype object is a plain one.
    const bare = Object.assign(Object.create(null) as object, { query: { from: 1, to: 1 } });
    expect((await runNodeWith(node, bare, ctx)).data).toBeDefined();
    expect(seen.calls).toBe(1);
  });

  it("reports every violation at once: unknown ports (own keys only), each port's fields", async () => {
    const { node, seen } = echo();
    const input = JSON.parse('{"__proto__": {"x": 1}, "constructor": 1, "query": {"from": -1, "to": "2", "extra": 1}}');
    const out = await runNodeWith(node, input, ctx);
    expect(out.error?.details.code).toBe("invalid_input");
    expect(violations(out)).toEqual(expect.arrayContaining(["__proto__", "constructor", "query.from", "query.to"]));
    expect(out.error?.error).toMatch(/__proto__ is not an input port of test-echo \(ports: query, params\)/);
    expect(seen.calls).toBe(0);
  });

  it("runs the cross-field check with the port checks, and not over a port that could not be read", async () => {
    const { node, seen } = echo();
    const crossed = await runNodeWith(node, { query: { from: 5, to: 1 }, params: { api_key: "" } }, ctx);
    expect(violations(crossed)).toEqual(expect.arrayContaining(["params.api_key", "query.from"]));
    const hostile = {
      get query(): never {
        throw new Error("no reading me");
      },
    };
    const unreadable = await runNodeWith(node, hostile, ctx);
    expect(unreadable.error?.details.code).toBe("invalid_input");
    expect(violations(unreadable)).toEqual(["query"]);
    expect(unreadable.error?.error).toContain("query could not be read: no reading me");
    // A value that is not JSON data (a function, a cycle) is refused too, never handed on.
    const cycle: Record<string, unknown> = { from: 1, to: 2 };
    cycle.self = cycle;
    expect((await runNodeWith(node, { query: cycle }, ctx)).error?.details.code).toBe("invalid_input");
    expect(seen.calls).toBe(0);
  });

  it("copies the input: what run gets is not the caller's object", async () => {
    const { node, seen } = echo();
    const query = { from: 1, to: 2 };
    await runNodeWith(node, { query }, ctx);
    const got = (seen.values[0] as { query: object }).query;
    expect(got).not.toBe(query);
    expect(query).toEqual({ from: 1, to: 2 }); // no default written into the caller's object
  });
});

describe("runNodeWith: failures", () => {
  it("puts what run throws on the error port: a ChainmailError as it is, anything else as internal", async () => {
    const upstream = new ChainmailError("UPSTREAM_NOT_FOUND", "No such contract.", { details: { status: 404 } });
    const known = await runNodeWith(echo(() => upstream).node, { query: { from: 1, to: 2 } }, ctx);
    expect(known).toEqual({
      error: { error: "No such contract.", details: { code: "upstream_not_found", status: 404 } },
    });
    const bug = await runNodeWith(echo(() => new TypeError("x is undefined")).node, { query: { from: 1, to: 2 } }, ctx);
    expect(bug.error?.details.code).toBe("internal");
    expect(bug.error?.error).toContain("x is undefined");
    const thrownText = await runNodeWith(echo(() => "plain text").node, { query: { from: 1, to: 2 } }, ctx);
    expect(thrownText.error?.details.code).toBe("internal");
  });

  it("scrubs the config's credentials and those given in a secret port out of the error, wherever they are", async () => {
    const given = "caller-key-abcdef";
    const leak = () =>
      new ChainmailError("UPSTREAM_AUTH", `refused ${OPERATOR_KEY} and ${given}`, {
        details: { sent: [given, { key: OPERATOR_KEY }], status: 401 },
      });
    const config = testConfig({ NFTPORT_API_KEY: OPERATOR_KEY, SMTP_URL: "smtp://u:p%40ss-word@127.0.0.1:25" });
    const out = await runNodeWith(
      echo(leak).node,
      { query: { from: 1, to: 2 }, params: { api_key: given } },
      { config },
    );
    expect(out.error?.error).toBe("refused [REDACTED] and [REDACTED]");
    expect(out.error?.details).toEqual({
      code: "upstream_auth",
      sent: ["[REDACTED]", { key: "[REDACTED]" }],
      status: 401,
    });
    // The SMTP URL's password, decoded and as written.
    const smtp = await runNodeWith(
      echo(() => new Error("auth p@ss-word / p%40ss-word")).node,
      { query: { from: 1, to: 2 } },
      { config },
    );
    expect(smtp.error?.error).not.toMatch(/p@ss-word|p%40ss-word/);
    // A secret port's value is secret however it was given: under a misspelt name too, and even when refused.
    const misspelt = await runNodeWith(
      echo().node,
      { query: { from: 9, to: 1 }, params: { apikey: "misspelt-secret-1" } },
      { config },
    );
    expect(JSON.stringify(misspelt.error)).not.toContain("misspelt-secret-1");
    // A known field that is not secret (the chain) is not taken for one.
    const chain = await runNodeWith(
      echo(() => new Error("unknown chain ethereum")).node,
      { query: { from: 1, to: 2 }, params: { api_key: "k-123456", chain: "ethereum" } },
      { config },
    );
    expect(chain.error?.error).toContain("unknown chain ethereum");
  });
});

describe("runNode and describeNode", () => {
  it("runNode without a config takes this process's", async () => {
    let got: RunContext | undefined;
    const node = defineNode({
      id: "test-ctx",
      version: "v0",
      title: "Context",
      description: "Keeps its context",
      inputs: {},
      outputs: { data: Type.Unknown() },
      successPort: "data",
      run: async (_input, context) => {
        got = context;
        return { data: 1 };
      },
    });
    expect(await runNode(node, {})).toEqual({ data: 1 });
    expect(got?.config).toBe(defaultConfig());
    const own = testConfig();
    await runNode(node, {}, { config: own });
    expect(got?.config).toBe(own);
  });

  it("describeNode is the node's plain JSON form, without its functions", () => {
    const { node } = echo();
    const described = describeNode(node);
    expect(Object.keys(described)).toEqual([
      "id",
      "version",
      "title",
      "description",
      "inputs",
      "outputs",
      "successPort",
    ]);
    expect(described).toMatchObject({ id: "test-echo", version: "v0", successPort: "data" });
    expect(described.inputs.query).toEqual(JSON.parse(JSON.stringify(node.inputs.query)));
    expect(described.inputs.params["x-secret"]).toBe(true);
    expect(JSON.parse(JSON.stringify(described))).toEqual(described);
  });
});
