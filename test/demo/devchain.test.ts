/**
 * The dev chain, the demo contracts and the scripted activity, against a real anvil. The manifest is checked
 * against the chain itself: raw `eth_getLogs` decoded by hand here (not by the code under test), and on-chain
 * ownership after the sales.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActivityManifest,
  BIG_ERC721_ID,
  BIG_ERC1155_ID,
  BIG_QUANTITY,
  createActivity,
  createBulkActivity,
  type SaleRecord,
} from "../../src/demo/activity.js";
import { type Deployed, deployAll } from "../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../src/demo/devchain.js";

const TOPIC = {
  Transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  TransferSingle: "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
  TransferBatch: "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb",
  OrderFulfilled: "0x9d9af8e38d66c62e2c12f0225249fd9d721c54b83f48d9352c97c6cacdcb6f31",
  // keccak256("AnswerUpdated(int256,uint256,uint256)")
  AnswerUpdated: "0x0559884fd3a460db3073b7fc896cc77986f16e378210ded43186175bf646fc5f",
};

interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  logIndex: string;
  transactionHash: string;
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result as T;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const word = (data: string, i: number) => BigInt(`0x${data.slice(2 + 64 * i, 2 + 64 * (i + 1))}`);
const address = (topic: string) => `0x${topic.slice(26)}`;
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("dev chain", () => {
  let chain: DevChain;
  let deployed: Deployed;
  let manifest: ActivityManifest;
  let logs: RpcLog[];

  beforeAll(async () => {
    chain = await startAnvil();
    deployed = await deployAll(chain.rpcUrl);
    manifest = await createActivity(chain.rpcUrl, deployed);
    logs = await rpc<RpcLog[]>(chain.rpcUrl, "eth_getLogs", [
      {
        fromBlock: hex(manifest.blocks[0]),
        toBlock: hex(manifest.blocks[1]),
        address: [deployed.erc721, deployed.erc1155, deployed.seaport, deployed.priceFeed],
      },
    ]);
  });

  afterAll(async () => {
    await chain?.stop();
  });

  it("deploys every contract with code, at lower-case addresses", async () => {
    for (const [name, at] of Object.entries(deployed)) {
      expect(at, name).toMatch(/^0x[0-9a-f]{40}$/);
      const code = await rpc<string>(chain.rpcUrl, "eth_getCode", [at, "latest"]);
      expect(code.length, name).toBeGreaterThan(2);
    }
    expect(new Set(Object.values(deployed)).size).toBe(7);
  });

  it("records every kind: mint, transfer, burn, sale; both standards; batches; both currencies and sides", () => {
    const kinds = new Set(manifest.records.map((r) => r.type));
    expect([...kinds].sort()).toEqual(["burn", "mint", "sale", "transfer"]);
    for (const type of ["mint", "transfer", "burn"] as const) {
      for (const contract of [deployed.erc721, deployed.erc1155]) {
        expect(manifest.records.some((r) => r.type === type && r.contract === contract)).toBe(true);
      }
    }
    expect(manifest.records.some((r) => r.batchIndex > 0 && r.type === "mint")).toBe(true);
    expect(manifest.records.some((r) => r.batchIndex > 0 && r.type === "transfer")).toBe(true);
    expect(manifest.records.some((r) => r.batchIndex > 0 && r.type === "burn")).toBe(true);

    const sales = manifest.records.filter((r): r is SaleRecord => r.type === "sale");
    const summary = sales.map((s) => [
      s.contractType,
      s.side,
      s.currency === "ETH" ? "ETH" : "ERC20",
      s.price,
      s.quantity,
    ]);
    expect(summary).toEqual([
      ["ERC721", "listing", "ETH", "1.5", "1"],
      ["ERC721", "listing", "ERC20", "250", "1"],
      ["ERC1155", "listing", "ETH", "0.3", "4"],
      ["ERC721", "bid", "ERC20", "100.5", "1"],
    ]);
    for (const sale of sales) {
      expect(sale.marketplace).toBe("seaport"); // the demo pays no OpenSea fee wallet;
      expect(sale.seller).toBe(manifest.accounts.alice);
      expect(sale.buyer).toBe(manifest.accounts.bob);
      expect([sale.from, sale.to]).toEqual([sale.seller, sale.buyer]);
      if (sale.currency !== "ETH") expect(sale.currency).toBe(deployed.weth);
    }
    expect(sales.find((s) => s.price === "100.5")?.priceRaw).toBe("100500000000000000000");
  });

  it("keeps token ids and quantities beyond 2^53 exact", () => {
    expect(manifest.records.some((r) => r.tokenId === BIG_ERC721_ID.toString() && r.type === "mint")).toBe(true);
    const big1155 = manifest.records.filter((r) => r.tokenId === BIG_ERC1155_ID.toString());
    expect(big1155.map((r) => [r.type, r.quantity])).toEqual([
      ["mint", "9007199254740993"],
      ["transfer", "9007199254740993"],
      ["burn", (2n ** 52n).toString()],
    ]);
    expect(BIG_QUANTITY.toString()).toBe("9007199254740993");
  });

  it("matches the chain's logs one to one", () => {
    const nftLogs = logs.filter(
      (l) =>
        (l.topics[0] === TOPIC.Transfer && l.topics.length === 4) ||
        l.topics[0] === TOPIC.TransferSingle ||
        l.topics[0] === TOPIC.OrderFulfilled,
    );
    const batchRows = logs
      .filter((l) => l.topics[0] === TOPIC.TransferBatch)
      .reduce((n, l) => n + Number(word(l.data, 2)), 0); // ids[] length sits at the first array's head
    expect(manifest.records.length).toBe(nftLogs.length + batchRows);

    for (const record of manifest.records) {
      const log = logs.find(
        (l) => Number(l.blockNumber) === record.blockNumber && Number(l.logIndex) === record.logIndex,
      );
      expect(log, `${record.type} at ${record.blockNumber}/${record.logIndex}`).toBeDefined();
      if (!log) continue;
      expect(log.transactionHash).toBe(record.txHash);
      if (record.type === "sale") {
        expect(log.topics[0]).toBe(TOPIC.OrderFulfilled);
        expect(log.address).toBe(deployed.seaport);
        continue;
      }
      expect(log.address).toBe(record.contract);
      if (log.topics[0] === TOPIC.Transfer) {
        expect([address(log.topics[1]!), address(log.topics[2]!), BigInt(log.topics[3]!).toString()]).toEqual([
          record.from,
          record.to,
          record.tokenId,
        ]);
        expect(record.quantity).toBe("1");
      } else if (log.topics[0] === TOPIC.TransferSingle) {
        expect([address(log.topics[2]!), address(log.topics[3]!)]).toEqual([record.from, record.to]);
        expect([word(log.data, 0).toString(), word(log.data, 1).toString()]).toEqual([record.tokenId, record.quantity]);
      } else {
        expect(log.topics[0]).toBe(TOPIC.TransferBatch);
        // data: offset(ids), offset(values), ids.length, ids..., values.length, values...
        const n = Number(word(log.data, 2));
        expect(word(log.data, 3 + record.batchIndex).toString()).toBe(record.tokenId);
        expect(word(log.data, 4 + n + record.batchIndex).toString()).toBe(record.quantity);
      }
      const kind =
        record.from === `0x${"0".repeat(40)}` ? "mint" : record.to === `0x${"0".repeat(40)}` ? "burn" : "transfer";
      expect(record.type).toBe(kind);
    }
  });

  it("left the chain in the state the records describe", async () => {
    const ownerOf = async (id: bigint) =>
      address(
        await rpc<string>(chain.rpcUrl, "eth_call", [
          { to: deployed.erc721, data: `0x6352211e${id.toString(16).padStart(64, "0")}` },
          "latest",
        ]),
      );
    for (const id of [2n, 3n, 4n]) expect(await ownerOf(id)).toBe(manifest.accounts.bob);
    await expect(ownerOf(1n)).rejects.toThrow(); // burnt
  });

  it("records the price feed updates with 8 decimals", () => {
    expect(manifest.priceUpdates.map((p) => [p.answer, p.roundId])).toEqual([
      ["300012345678", "1"],
      ["310000000000", "2"],
      ["299987654321", "3"],
    ]);
    const feedLogs = logs.filter((l) => l.address === deployed.priceFeed);
    expect(feedLogs.map((l) => [l.topics[0], BigInt(l.topics[1]!).toString()])).toEqual(
      manifest.priceUpdates.map((p) => [TOPIC.AnswerUpdated, p.answer]),
    );
  });

  it("emits exactly the asked number of bulk ERC-721 mint events", async () => {
    const bulk = await createBulkActivity(chain.rpcUrl, deployed, 2500, 1000);
    expect(bulk.events).toBe(2500);
    const bulkLogs = await rpc<RpcLog[]>(chain.rpcUrl, "eth_getLogs", [
      { fromBlock: hex(bulk.blocks[0]), toBlock: hex(bulk.blocks[1]), address: deployed.bulkMinter },
    ]);
    expect(bulkLogs.length).toBe(2500);
    expect(new Set(bulkLogs.map((l) => l.blockNumber)).size).toBe(3);
    expect(bulkLogs.every((l) => l.topics.length === 4 && l.topics[0] === TOPIC.Transfer)).toBe(true);
    expect(new Set(bulkLogs.map((l) => l.topics[3])).size).toBe(2500);
  });

  it("stops anvil: the process is gone and the port refuses", async () => {
    const other = await startAnvil();
    expect(isAlive(other.pid)).toBe(true);
    expect(await rpc<string>(other.rpcUrl, "eth_chainId", [])).toBe("0x7a69");
    await other.stop();
    expect(isAlive(other.pid)).toBe(false);
    await expect(rpc(other.rpcUrl, "eth_chainId", [])).rejects.toThrow();
    await other.stop(); // a second stop is harmless
  });
});
