/**
 * The parts every venue decoder is made of (venue.ts): a sale record of a log, the currency of a token address, an
 * NFT's standard read from its transaction, the NFT and ERC-20 transfers among a transaction's logs, and a bundle's
 * price split evenly.
 */
import { describe, expect, it } from "vitest";
import { TOPIC } from "../../../src/ingest/decode.js";
import {
  currencyOf,
  nftTransfers,
  sale,
  share,
  standardInTx,
  tokenTransfers,
} from "../../../src/ingest/venues/venue.js";
import { address, topic, word } from "../../support/index-helpers.js";
import { BUYER, ETH, erc20, erc721, log, NFT, SELLER } from "../../support/venue-logs.js";

const OTHER = address(0x7e1);
const transferSingle = (
  at: string,
  from: string,
  to: string,
  id: number,
  value: number,
  data = word(id) + word(value),
) => log(at, [TOPIC.transferSingle, topic(SELLER), topic(from), topic(to)], data);

describe("sale", () => {
  it("reads a log's place and hashes (lower case) into a sale record of the NFT, seller to buyer, with its terms", () => {
    const at = {
      ...log(NFT, [TOPIC.transfer]),
      blockNumber: "0x1f",
      logIndex: "0xa",
      transactionHash: `0x${"AB".repeat(32)}`,
      blockHash: `0x${"CD".repeat(32)}`,
    };
    const terms = { marketplace: "x", currency: null, amount: ETH };
    const nft = { contract: NFT, tokenId: 2n ** 70n, quantity: 3n, contractType: "ERC1155" as const };
    expect(sale(at, nft, SELLER, BUYER, terms)).toEqual({
      blockNumber: 31,
      logIndex: 10,
      txHash: `0x${"ab".repeat(32)}`,
      blockHash: `0x${"cd".repeat(32)}`,
      batchIndex: 0,
      kind: "sale",
      contract: NFT,
      tokenId: (2n ** 70n).toString(),
      from: SELLER,
      to: BUYER,
      quantity: "3",
      contractType: "ERC1155",
      sale: terms,
    });
    expect(sale(at, nft, SELLER, BUYER, terms, 4).batchIndex).toBe(4);
  });
});

describe("currencyOf", () => {
  it("reads the zero address as ETH (null) and any other token as itself", () => {
    expect(currencyOf(address(0))).toBeNull();
    expect(currencyOf(OTHER)).toBe(OTHER);
  });
});

describe("standardInTx", () => {
  it("reads ERC721 from the token's Transfer in the transaction, ERC1155 from a TransferSingle of the contract", () => {
    expect(standardInTx({ logs: [erc721(SELLER, BUYER, 5)] }, NFT, 5n, 2n)).toBe("ERC721");
    expect(standardInTx({ logs: [transferSingle(NFT, SELLER, BUYER, 9, 1)] }, NFT, 5n, 1n)).toBe("ERC1155");
  });

  it("reads the quantity when the transaction shows no transfer of that token: 1 as ERC721, more as ERC1155", () => {
    const elsewhere = { logs: [transferSingle(OTHER, SELLER, BUYER, 5, 1), erc721(SELLER, BUYER, 6)] };
    expect(standardInTx(elsewhere, NFT, 5n, 1n)).toBe("ERC721");
    expect(standardInTx(elsewhere, NFT, 5n, 2n)).toBe("ERC1155");
    expect(standardInTx({ logs: [] }, NFT, 5n, 2n)).toBe("ERC1155");
  });
});

describe("nftTransfers", () => {
  it("reads ERC-721 Transfers and ERC-1155 TransferSingles, in log order, contracts in lower case", () => {
    const logs = [
      erc721(SELLER, BUYER, 1),
      transferSingle(OTHER.toUpperCase().replace("0X", "0x"), BUYER, SELLER, 2, 7),
    ];
    expect(nftTransfers(logs)).toEqual([
      { contract: NFT, tokenId: 1n, quantity: 1n, from: SELLER, to: BUYER, type: "ERC721" },
      { contract: OTHER, tokenId: 2n, quantity: 7n, from: BUYER, to: SELLER, type: "ERC1155" },
    ]);
  });

  it("passes over ERC-20 transfers, TransferSingles with short data and other events", () => {
    const logs = [
      erc20(OTHER, SELLER, BUYER, ETH),
      transferSingle(NFT, SELLER, BUYER, 2, 7, word(2)),
      log(NFT, [TOPIC.transferBatch, topic(0), topic(SELLER), topic(BUYER)], word(64) + word(96) + word(0) + word(0)),
    ];
    expect(nftTransfers(logs)).toEqual([]);
  });
});

describe("tokenTransfers", () => {
  it("reads three-topic Transfers with an amount as ERC-20 moves, and nothing else", () => {
    const logs = [
      erc20(OTHER, SELLER, BUYER, 2n ** 200n),
      erc721(SELLER, BUYER, 1),
      log(OTHER, [TOPIC.transfer, topic(SELLER), topic(BUYER)]),
    ];
    expect(tokenTransfers(logs)).toEqual([{ token: OTHER, from: SELLER, to: BUYER, amount: 2n ** 200n }]);
  });
});

describe("share", () => {
  it("splits a total evenly, rounded down, and keeps an unknown total unknown", () => {
    expect(share(10n, 3)).toBe(3n);
    expect(share(ETH, 1)).toBe(ETH);
    expect(share(null, 2)).toBeNull();
  });
});
