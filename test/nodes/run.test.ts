/**
 * src/nodes/run.ts on its own: the library's typed entry points take a node or its id, run the same node either way,
 * and say so on `error` (runNode) or by throwing (pages, records: a generator has no port) when the id is unknown.
 * Against the local NFTPort server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { nftTransactionsByContract } from "../../src/nodes/index.js";
import { pages, records, runNode } from "../../src/nodes/run.js";
import { testConfig } from "../support/helpers.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_721, standardDataset } from "../upstreams/nftport-data.js";

let upstream: NftportServer;
let config: ReturnType<typeof testConfig>;
const input = { query: { contract_address: CONTRACT_721, page_size: 7 }, params: { api_key: VALID_KEY } };

beforeAll(async () => {
  upstream = await startNftport(standardDataset());
  config = testConfig({ NFTPORT_BASE_URL: upstream.url });
});
afterAll(() => upstream.close());

describe("the library's typed entry points", () => {
  it("run the same node given by id or as the node", async () => {
    const byId = await runNode("nft-transactions-by-contract", input, { config });
    const byNode = await runNode(nftTransactionsByContract, input, { config });
    expect(byId.error).toBeUndefined();
    expect(byId.data?.transactions).toHaveLength(7);
    // The same records (a continuation is issued afresh by each call).
    expect(byId.data?.transactions).toEqual(byNode.data?.transactions);
  });

  it("answer an unknown id on `error`, naming it (cut to 100 characters) and where the ids are listed", async () => {
    // An id the types refuse, as a plain JavaScript caller could pass.
    const id = `nft-${"x".repeat(300)}` as "nft-transactions-by-contract";
    const out: Record<string, unknown> = await runNode(id, input, { config });
    expect(out.error).toEqual({
      error: `Unknown node "nft-${"x".repeat(96)}". \`chainmail nodes\` lists the nodes; the library's \`nodes\` maps each id to its node.`,
      details: { code: "unknown_node" },
    });
    expect(Object.keys(out)).toEqual(["error"]);
  });

  it("page through a retriever by id: every record once, pages as the node gives them", async () => {
    const seen: number[] = [];
    const all: unknown[] = [];
    for await (const page of pages("nft-transactions-by-contract", input, {}, { config })) {
      seen.push(page.transactions.length);
      all.push(...page.transactions);
    }
    const expected = standardDataset().byContract.get(CONTRACT_721)!;
    expect(all).toHaveLength(expected.length);
    expect(seen.slice(0, -1).every((n) => n === 7)).toBe(true);
    const collected: unknown[] = [];
    for await (const record of records(nftTransactionsByContract, input, {}, { config })) collected.push(record);
    expect(collected).toEqual(all);
  });

  it("stop records at the limit asked", async () => {
    const collected: unknown[] = [];
    for await (const record of records("nft-transactions-by-contract", input, { limit: 10 }, { config })) {
      collected.push(record);
    }
    expect(collected).toHaveLength(10);
  });

  it("throw for an unknown retriever id when paged (a generator has no error port): pages at once, records when read", async () => {
    expect(() => pages("no-such-node" as never, input as never, {}, { config })).toThrow(ChainmailError);
    await expect(records("no-such-node" as never, input as never).next()).rejects.toThrow(
      /Unknown node "no-such-node"/,
    );
  });
});
