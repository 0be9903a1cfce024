/**
 * Test helpers for the own index: a real anvil per test file, contracts that emit exactly the logs a test asks
 * for (installed with `anvil_setCode`, so every record kind can be produced without compiling Solidity), and
 * encoders for the events the index decodes.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { startAnvil as startDevChain } from "../../src/demo/devchain.js";
import { TOPIC } from "../../src/ingest/decode.js";
import { ORDER_FULFILLED } from "../../src/ingest/venues/seaport.js";

export interface Anvil {
  rpcUrl: string;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  stop(): Promise<void>;
}

export async function rpcCall<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** Starts anvil (src/demo/devchain.ts) on a free loopback port; `stop()` kills exactly that process. */
export async function startAnvil(): Promise<Anvil> {
  const chain = await startDevChain();
  return {
    rpcUrl: chain.rpcUrl,
    rpc: <T>(method: string, params: unknown[] = []) => rpcCall<T>(chain.rpcUrl, method, params),
    stop: () => chain.stop(),
  };
}

/**
 * Runtime code of a contract that emits one log per call: calldata = word(3 or 4: topic count), four topic
 * words, then the log data. Hand-assembled:
 * push topics 3..0, size = calldatasize - 0xa0, calldatacopy(0, 0xa0, size), then LOG4, or LOG3 when word 0 is 3.
 */
export const EMITTER_CODE =
  "0x608035606035604035602035" + "60a0360380" + "60a0600037" + "6000" + "600035600314602357" + "a400" + "5ba300";

/** Anvil's first dev account (unlocked). */
export const SENDER = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";

export const word = (value: bigint | number | string): string => {
  const n = typeof value === "string" ? BigInt(value) : BigInt(value);
  return BigInt.asUintN(256, n).toString(16).padStart(64, "0");
};
export const topic = (value: bigint | number | string): string => `0x${word(value)}`;
export const address = (n: number): string => `0x${n.toString(16).padStart(40, "0")}`;

/** Installs the emitter at each address. */
export async function installEmitters(anvil: Anvil, addresses: string[]): Promise<void> {
  for (const a of addresses) await anvil.rpc("anvil_setCode", [a, EMITTER_CODE]);
}

export interface EmitResult {
  txHash: string;
  blockNumber: number;
}

/** The transaction that makes an emitter at `contract` log these topics and data. */
export function emitTx(contract: string, topics: string[], data = "") {
  const padded = [...topics, ...Array(4 - topics.length).fill(topic(0))];
  const calldata = `0x${word(topics.length)}${padded.map((t) => t.slice(2)).join("")}${data}`;
  return { from: SENDER, to: contract, data: calldata, gas: "0x100000" };
}

export async function receiptOf(anvil: Anvil, txHash: string) {
  for (let i = 0; i < 200; i++) {
    const receipt = await anvil.rpc<{ blockNumber: string; status: string; logs: unknown[] } | null>(
      "eth_getTransactionReceipt",
      [txHash],
    );
    if (receipt) return receipt;
    await sleep(10);
  }
  throw new Error(`no receipt for ${txHash}`);
}

/** Makes `contract` emit a log with these topics and data (hex without 0x). One transaction, mined at once. */
export async function emit(anvil: Anvil, contract: string, topics: string[], data = ""): Promise<EmitResult> {
  const txHash = await anvil.rpc<string>("eth_sendTransaction", [emitTx(contract, topics, data)]);
  const receipt = await receiptOf(anvil, txHash);
  if (receipt.status !== "0x1" || receipt.logs.length !== 1) throw new Error(`emit failed: ${JSON.stringify(receipt)}`);
  return { txHash, blockNumber: Number(receipt.blockNumber) };
}

export const erc721Transfer = (anvil: Anvil, contract: string, from: string, to: string, tokenId: bigint | number) =>
  emit(anvil, contract, [TOPIC.transfer, topic(from), topic(to), topic(tokenId)]);

export const erc20Transfer = (anvil: Anvil, contract: string, from: string, to: string, amount: bigint) =>
  emit(anvil, contract, [TOPIC.transfer, topic(from), topic(to)], word(amount));

export const transferSingle = (
  anvil: Anvil,
  contract: string,
  from: string,
  to: string,
  id: bigint | number,
  value: bigint | number,
) => emit(anvil, contract, [TOPIC.transferSingle, topic(SENDER), topic(from), topic(to)], word(id) + word(value));

export function transferBatch(
  anvil: Anvil,
  contract: string,
  from: string,
  to: string,
  ids: (bigint | number)[],
  values: (bigint | number)[],
) {
  const idsAt = 64;
  const valuesAt = idsAt + 32 * (ids.length + 1);
  const data =
    word(idsAt) +
    word(valuesAt) +
    word(ids.length) +
    ids.map(word).join("") +
    word(values.length) +
    values.map(word).join("");
  return emit(anvil, contract, [TOPIC.transferBatch, topic(SENDER), topic(from), topic(to)], data);
}

export interface SeaportItem {
  itemType: number;
  token: string;
  identifier: bigint | number;
  amount: bigint | number;
  recipient?: string;
}

/** ABI data of `OrderFulfilled(bytes32 orderHash, address indexed offerer, address indexed zone, address recipient, SpentItem[], ReceivedItem[])`. */
export function orderFulfilledData(recipient: string, offer: SeaportItem[], consideration: SeaportItem[]): string {
  const offerAt = 4 * 32;
  const considerationAt = offerAt + 32 * (1 + 4 * offer.length);
  const item = (i: SeaportItem, withRecipient: boolean) =>
    word(i.itemType) +
    word(i.token) +
    word(i.identifier) +
    word(i.amount) +
    (withRecipient ? word(i.recipient ?? address(0)) : "");
  return (
    word(0x1234) +
    word(recipient) +
    word(offerAt) +
    word(considerationAt) +
    word(offer.length) +
    offer.map((i) => item(i, false)).join("") +
    word(consideration.length) +
    consideration.map((i) => item(i, true)).join("")
  );
}

export const orderFulfilled = (
  anvil: Anvil,
  seaport: string,
  offerer: string,
  recipient: string,
  offer: SeaportItem[],
  consideration: SeaportItem[],
) =>
  emit(
    anvil,
    seaport,
    [ORDER_FULFILLED, topic(offerer), topic(address(0))],
    orderFulfilledData(recipient, offer, consideration),
  );

export const answerUpdated = (anvil: Anvil, feed: string, answer: bigint, round: number) =>
  emit(anvil, feed, [TOPIC.answerUpdated, topic(answer), topic(round)], word(1_700_000_000));
