/**
 * `checkPort` fills in defaults with a plan worked out per schema instead of TypeBox's `Value.Default` walk: for
 * every input port of every node and for the watch configuration, valid values come out exactly as
 * `Value.Default` makes them, and a default is never shared between two runs.
 */
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { describe, expect, it } from "vitest";
import { checkPort } from "../../src/core/validate.js";
import { nodes } from "../../src/nodes/index.js";

const CONTRACT = "0xa49a0e5ef83cf89ac8aae182f22e6464b229efc8";

/** Valid values of each port, with the defaulted fields left out and given. */
const samples: Record<string, unknown[]> = {
  query: [
    { contract_address: CONTRACT },
    { contract_address: CONTRACT, token_id: "11" },
    { contract_address: CONTRACT, token_id: "11", type: ["sale", "mint"], page_size: 5, continuation: "abc" },
    { contract_address: CONTRACT, type: ["bid"] },
    {},
    { type: ["all"], from_block: 1, to_block: 10n ** 20n },
  ],
  params: [
    { api_key: "k-1234" },
    { api_key: "k-1234", chain: "ethereum" },
    { "user id": "u-1234", password: "p-1234" },
  ],
  request: [
    { Messages: [{ From: { Email: "a@example.org" }, To: [{ Email: "b@example.org" }], Subject: "s", TextPart: "t" }] },
    {
      Globals: { From: { Email: "a@example.org" } },
      Messages: [{ To: [{ Email: "b@example.org", Name: "B" }], TextPart: "t" }],
      SandboxMode: true,
    },
  ],
};

describe("defaults filled in by checkPort", () => {
  for (const node of Object.values(nodes)) {
    for (const [port, schema] of Object.entries(node.inputs) as [string, TSchema][]) {
      it(`${node.id} ${port}: as Value.Default makes them`, () => {
        let checked = 0;
        for (const sample of samples[port] ?? []) {
          const ours = checkPort(port, schema, structuredClone(sample));
          if (ours.violations.length) continue; // a sample of another node's port
          checked++;
          expect(ours.value).toEqual(Value.Default(schema, structuredClone(sample)));
        }
        expect(checked).toBeGreaterThan(0);
      });
    }
  }

  it("each run gets its own copy of an array default", () => {
    const schema = nodes["nft-transactions-by-contract"]!.inputs.query as TSchema;
    const first = checkPort("query", schema, { contract_address: CONTRACT }).value as { type: string[] };
    expect(first.type).toEqual(["all"]);
    first.type.push("sale");
    const second = checkPort("query", schema, { contract_address: CONTRACT }).value as { type: string[] };
    expect(second.type).toEqual(["all"]);
  });
});
