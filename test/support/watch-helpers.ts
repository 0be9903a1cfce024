/** Shared by the watch tests: an anvil with an NFT and a Seaport emitter, sales on it, and a log catcher. */
import type { Logger } from "../../src/core/node.js";
import { ORDER_FULFILLED } from "../../src/ingest/venues/seaport.js";
import type { Mail, MailKind } from "../../src/watch/store.js";
import {
  type Anvil,
  address,
  emitTx,
  orderFulfilled,
  orderFulfilledData,
  type SeaportItem,
  topic,
} from "./index-helpers.js";

export const NFT = address(0x721);
export const SEAPORT = address(0x5ea);
export const SELLER = address(0xa11ce);
export const BUYER = address(0xb0b);
export const ZERO = address(0);
const WEI = 10n ** 18n;

/** A listing of `tokenId` filled for `milliEth` / 1000 ETH: one OrderFulfilled, one transaction, one block. */
export function sell(anvil: Anvil, tokenId: number, milliEth: number) {
  const { offer, consideration } = saleItems(tokenId, milliEth);
  return orderFulfilled(anvil, SEAPORT, SELLER, BUYER, offer, consideration);
}

function saleItems(tokenId: number, milliEth: number): { offer: SeaportItem[]; consideration: SeaportItem[] } {
  return {
    offer: [{ itemType: 2, token: NFT, identifier: tokenId, amount: 1 }],
    consideration: [
      { itemType: 0, token: ZERO, identifier: 0, amount: (BigInt(milliEth) * WEI) / 1000n, recipient: SELLER },
    ],
  };
}

/** The transaction of such a sale, for anvil_reorg's replacement blocks. */
export function saleTx(tokenId: number, milliEth: number) {
  const { offer, consideration } = saleItems(tokenId, milliEth);
  return emitTx(
    SEAPORT,
    [ORDER_FULFILLED, topic(SELLER), topic(ZERO)],
    orderFulfilledData(BUYER, offer, consideration),
  );
}

export interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

/** A logger that keeps every line, for assertions on what the watch reported. */
export function captureLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (obj: object, msg?: string) => {
    lines.push({ level, msg: msg ?? "", ...obj });
  };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/**
 * Many sales at once, `perBlock` to a block (sent with automine off, then mined). Resolves with the first and last
 * block that hold them.
 */
export async function sellMany(
  anvil: Anvil,
  sales: readonly { tokenId: number; milliEth: number }[],
  perBlock = 100,
): Promise<{ first: number; last: number }> {
  const head = async () => Number(await anvil.rpc<string>("eth_blockNumber"));
  const first = (await head()) + 1;
  await anvil.rpc("evm_setAutomine", [false]);
  try {
    for (let i = 0; i < sales.length; i += perBlock) {
      let last = "";
      for (const { tokenId, milliEth } of sales.slice(i, i + perBlock)) {
        last = await anvil.rpc<string>("eth_sendTransaction", [saleTx(tokenId, milliEth)]);
      }
      await anvil.rpc("evm_mine");
      if (!(await anvil.rpc("eth_getTransactionReceipt", [last]))) throw new Error("a block did not take its sales");
    }
  } finally {
    await anvil.rpc("evm_setAutomine", [true]);
  }
  return { first, last: await head() };
}

/** A journalled email not yet sent, for the store's tests: its subject is its id. */
export const pendingMail = (customId: string, kind?: MailKind): Mail => ({
  customId,
  rule: "r",
  state: "pending",
  attempts: 1,
  message: { Subject: customId } as Mail["message"],
  ...(kind ? { kind } : {}),
});
