/**
 * NFT_SOURCE=service (src/sources/service/client.ts): the three retrievers read through another chainmail's HTTP
 * service (here a real `startServer` in front of the local NFTPort-compatible server), record for record, its errors
 * and its token handled.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringifyJson } from "../../../src/core/json.js";
import { runNode } from "../../../src/core/node.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { type RunningServer, startServer } from "../../../src/server/index.js";
import { testConfig } from "../../support/helpers.js";
import { type NftportServer, startNftport, VALID_KEY } from "../../upstreams/nftport.js";
import { CONTRACT_721, CONTRACT_1155, HUGE_TOKEN, standardDataset } from "../../upstreams/nftport-data.js";

const TOKEN = "service-token-0123456789abcdef";
let upstream: NftportServer;
let service: RunningServer;

beforeAll(async () => {
  upstream = await startNftport(standardDataset());
  service = await startServer({
    port: 0,
    config: testConfig({ NFTPORT_BASE_URL: upstream.url, NFTPORT_API_KEY: VALID_KEY }),
    tokens: [TOKEN],
  });
});
afterAll(async () => {
  await service.close();
  await upstream.close();
});

const through = (env: Record<string, string> = {}) =>
  testConfig({ NFT_SOURCE: "service", CHAINMAIL_SERVICE_URL: service.url, CHAINMAIL_SERVICE_TOKEN: TOKEN, ...env });

describe("the chainmail service as the NFT source", () => {
  it("gives the same pages as the service's own source, integers beyond 2^53 exact, no api_key needed", async () => {
    const query = { contract_address: CONTRACT_1155, token_id: HUGE_TOKEN, type: ["mint"], page_size: 5 };
    const remote = await runNode(nftTransactionsByToken, { query }, { config: through() });
    const direct = await runNode(
      nftTransactionsByToken,
      { query, params: { api_key: VALID_KEY } },
      { config: testConfig({ NFTPORT_BASE_URL: upstream.url }) },
    );
    expect(remote.error).toBeUndefined();
    expect(remote.data!.transactions.length).toBeGreaterThan(0);
    // Continuations name a server-side cursor each time: the records are what must be the same.
    expect(stringifyJson(remote.data!.transactions)).toBe(stringifyJson(direct.data!.transactions));
    expect(stringifyJson(remote.data)).toContain("10000000000000000000000");
    // The service's `response` is the upstream it read (NFTPort's answer), not the service's own envelope.
    expect(remote.response?.status).toBe(200);
    expect(remote.response?.body).toContain('"response":"OK"');
    expect(remote.response?.body).not.toContain('"data"');
  });

  it("pages on by the service's continuation (by contract and the whole chain)", async () => {
    const first = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721, page_size: 10 } },
      { config: through() },
    );
    expect(first.data?.continuation).not.toBe("");
    const second = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721, page_size: 10, continuation: first.data!.continuation } },
      { config: through() },
    );
    expect(second.data!.transactions[0]).not.toEqual(first.data!.transactions[0]);
    const chain = await runNode(nftTransactionsOnChain, { query: { page_size: 3 } }, { config: through() });
    expect(chain.data?.transactions).toHaveLength(3);
  });

  it("a wrong token is upstream_auth naming the setting, the token never shown", async () => {
    const wrong = "wrong-token-0123456789abcdef";
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721 } },
      { config: through({ CHAINMAIL_SERVICE_TOKEN: wrong }) },
    );
    expect(out.error?.details).toMatchObject({ code: "upstream_auth", status: 403, field: "CHAINMAIL_SERVICE_TOKEN" });
    expect(stringifyJson(out)).not.toContain(wrong);
    expect(stringifyJson(out)).not.toContain(TOKEN);
  });

  it("the service's own errors pass through with their codes (invalid input found there)", async () => {
    const out = await runNode(
      nftTransactionsOnChain,
      { query: { from_block: 10, to_block: 5 } },
      { config: through() },
    );
    // Checked locally first: the same rules run before anything is sent.
    expect(out.error?.details.code).toBe("invalid_input");
    upstream.fault({ status: 500, body: "", times: 20 });
    const failed = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721 } },
      { config: through() },
    );
    upstream.clearFaults();
    expect(failed.error?.details).toMatchObject({ code: "upstream_server_error", via: service.url });
  });

  it("no URL is invalid_input naming CHAINMAIL_SERVICE_URL; a URL that is no service is upstream_bad_response", async () => {
    const none = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721 } },
      { config: testConfig({ NFT_SOURCE: "service" }) },
    );
    expect(none.error?.details).toMatchObject({ code: "invalid_input", setting: "CHAINMAIL_SERVICE_URL" });
    const wrong = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721 } },
      { config: testConfig({ NFT_SOURCE: "service", CHAINMAIL_SERVICE_URL: upstream.url }) },
    );
    expect(wrong.error?.details).toMatchObject({ code: "upstream_bad_response", status: 405 });
  });
});
