/**
 * The provider tables (src/chain/providers.ts) on their own: which provider an endpoint is, by the name given or
 * its host (never by a look-alike host, nor by the path or the key); what a list of calls costs where a provider
 * prices calls by method (a batch costs the sum of its calls); every provider named in INDEX_RPC_PROVIDER has a
 * table. (How the pacer and the range sizer read them is pacer.test.ts's and range-sizer.test.ts's.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { costOf, PROVIDER, providerOf } from "../../src/chain/providers.js";
import { INDEX_RPC_PROVIDERS } from "../../src/core/env.js";

describe("providerOf", () => {
  it("recognises each provider's endpoints by their host, with or without a key in the path", () => {
    const hosts: [string, string][] = [
      ["https://eth-mainnet.g.alchemy.com/v2/KEY", "alchemy"],
      ["https://eth-mainnet.alchemyapi.io/v2/KEY", "alchemy"],
      ["https://mainnet.infura.io/v3/KEY", "infura"],
      ["https://Mainnet.INFURA.io/v3/KEY", "infura"],
      ["https://blue-hidden-pond.quiknode.pro/KEY/", "quicknode"],
      ["https://x.quicknode.com/", "quicknode"],
      ["http://127.0.0.1:8545", "generic"],
      ["https://rpc.ankr.com/eth", "generic"],
      // Look-alikes are not the provider: the host must end in its domain.
      ["https://alchemy.com.evil.example/v2/KEY", "generic"],
      ["https://notinfura.io/v3/KEY", "generic"],
      ["https://example.org/infura.io/alchemy.com", "generic"],
    ];
    expect(hosts.map(([url]) => providerOf(undefined, url).name)).toEqual(hosts.map(([, name]) => name));
  });

  it("takes a provider named over what the host says", () => {
    for (const name of INDEX_RPC_PROVIDERS) {
      expect(providerOf(name, "https://eth-mainnet.g.alchemy.com/v2/KEY")).toBe(PROVIDER[name]);
    }
  });

  it("has a table for every provider a user may name, each under its own name", () => {
    expect(Object.keys(PROVIDER).sort()).toEqual([...INDEX_RPC_PROVIDERS].sort());
    for (const [name, provider] of Object.entries(PROVIDER)) expect(provider.name).toBe(name);
  });
});

describe("costOf", () => {
  it("prices Alchemy's calls by its compute-unit table, others at its default, and a batch at the sum", () => {
    expect(costOf(PROVIDER.alchemy, [{ method: "eth_getLogs" }])).toBe(75);
    expect(costOf(PROVIDER.alchemy, [{ method: "eth_blockNumber" }, { method: "eth_getBlockReceipts" }])).toBe(510);
    expect(costOf(PROVIDER.alchemy, [{ method: "eth_someNewMethod" }])).toBe(20);
    // Not an own property of the table: priced at the default, never read off Object's prototype.
    expect(costOf(PROVIDER.alchemy, [{ method: "constructor" }, { method: "__proto__" }])).toBe(40);
    expect(costOf(PROVIDER.alchemy, [])).toBe(0);
  });

  it("is undefined where a provider does not price calls by method", () => {
    for (const name of ["infura", "quicknode", "generic"] as const) {
      expect(costOf(PROVIDER[name], [{ method: "eth_getLogs" }])).toBeUndefined();
    }
  });

  it("adds up over any batch: the cost of a batch is the sum of its pieces' costs", () => {
    const method = fc.constantFrom(
      "eth_getLogs",
      "eth_call",
      "eth_blockNumber",
      "eth_getBlockByNumber",
      "other",
      "toString",
    );
    fc.assert(
      fc.property(fc.array(method.map((m) => ({ method: m }))), fc.nat(), (calls, at) => {
        const cut = calls.length === 0 ? 0 : at % (calls.length + 1);
        const whole = costOf(PROVIDER.alchemy, calls)!;
        expect(whole).toBe(
          costOf(PROVIDER.alchemy, calls.slice(0, cut))! + costOf(PROVIDER.alchemy, calls.slice(cut))!,
        );
        expect(whole).toBeGreaterThanOrEqual(10 * calls.length);
      }),
    );
  });
});
