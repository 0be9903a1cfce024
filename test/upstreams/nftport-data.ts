/**
 * Test data for the local NFTPort server: deterministic synthetic records of every shape (including token ids
 * and ERC-1155 quantities beyond 2^53) plus the real upstream records saved in test/fixtures/nftport/.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseJson, stringifyJson } from "../../src/core/json.js";
import type { Dataset, Rec } from "./nftport.js";

export const CONTRACT_721 = "0x1111111111111111111111111111111111111111";
export const CONTRACT_1155 = "0x2222222222222222222222222222222222222222";
export const EMPTY_CONTRACT = "0x3333333333333333333333333333333333333333";
/** A token id beyond 2^53, as the upstream sends it (a decimal string). */
export const HUGE_TOKEN = "79400006447981872162108805936960249632419041130515543620398493819452073705492";
/** An ERC-1155 quantity beyond 2^53, as a bare JSON integer. */
export const HUGE_QUANTITY = 10000000000000000000000n;

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const addr = (n: number) => `0x${hex(n, 40)}`;
const hash = (n: number) => `0x${hex(n, 64)}`;
const date = (block: number) => new Date(Date.UTC(2023, 0, 1) + block * 12_000).toISOString().slice(0, 19);

/** `count` records for one contract over consecutive blocks, cycling through every record shape. */
export function syntheticRecords(contract: string, count: number, firstBlock = 16_000_000, erc1155 = false): Rec[] {
  const out: Rec[] = [];
  for (let i = 0; i < count; i++) {
    const block = firstBlock + i;
    const tokenId = erc1155 && i % 5 === 0 ? HUGE_TOKEN : String(i % 7);
    const onChain = {
      transaction_hash: hash(block * 10 + 1),
      block_hash: hash(block * 10 + 2),
      block_number: block,
      transaction_date: date(block),
    };
    const nft = { contract_type: erc1155 ? "ERC1155" : "ERC721", contract_address: contract, token_id: tokenId };
    switch (i % 6) {
      case 0:
        out.push({
          type: "mint",
          owner_address: addr(i + 1),
          contract_address: contract,
          token_id: tokenId,
          quantity: erc1155 ? HUGE_QUANTITY : 1,
          ...onChain,
        });
        break;
      case 1:
        out.push({
          type: "transfer",
          transfer_from: addr(i),
          transfer_to: addr(i + 1),
          contract_address: contract,
          token_id: tokenId,
          quantity: 1,
          ...onChain,
        });
        break;
      case 2:
        out.push({
          type: "sale",
          buyer_address: addr(i + 2),
          seller_address: addr(i + 1),
          nft,
          quantity: erc1155 ? HUGE_QUANTITY : 1,
          price_details: { asset_type: "ETH", price: 0.25 + i / 100, price_usd: 400.123456789 + i },
          ...onChain,
          marketplace: i % 12 === 2 ? "opensea" : "x2y2",
        });
        break;
      case 3:
        out.push({
          type: "list",
          lister_address: addr(i + 3),
          nft,
          quantity: 1,
          price_details: {
            asset_type: "ERC20",
            contract_address: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
            price: 1.5,
            price_usd: 2500.5,
          },
          transaction_date: date(block),
          marketplace: "opensea",
        });
        break;
      case 4:
        out.push({
          type: "bid",
          bidder_address: addr(i + 4),
          nft,
          price_details: { asset_type: "ETH", price: 0.1, price_usd: 160.2 },
          transaction_date: date(block),
          marketplace: "looksrare",
        });
        break;
      default:
        out.push({
          type: "burn",
          owner_address: addr(i),
          contract_address: contract,
          token_id: tokenId,
          quantity: 1,
          ...onChain,
        });
    }
  }
  return out;
}

/** The directory of the saved real NFTPort responses. */
/** An ETH sale of `tokenId` of `contract` in `block`, as NFTPort lists one (hashes and date derived from the block). */
export function saleIn(contract: string, block: number, tokenId: number): Rec {
  const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
  return {
    type: "sale",
    buyer_address: "0x00000000000000000000000000000000000000b0",
    seller_address: "0x00000000000000000000000000000000000000a0",
    nft: { contract_type: "ERC721", contract_address: contract, token_id: String(tokenId) },
    quantity: 1,
    price_details: { asset_type: "ETH", price: 1, price_usd: 2000 },
    transaction_hash: hash(block * 7),
    block_hash: hash(block * 11),
    block_number: block,
    transaction_date: new Date(Date.UTC(2023, 0, 1) + block * 12_000).toISOString().slice(0, 19),
    marketplace: "opensea",
  };
}

export const FIXTURES = join(import.meta.dirname, "..", "fixtures", "nftport");

/** The OK pages in one fixture file: a single response, or an array of saved responses (S4b). */
export function realPages(text: string): { transactions: Rec[]; continuation?: string }[] {
  const body = parseJson(text) as unknown;
  const all = Array.isArray(body) ? body : [body];
  return all.filter((r): r is { transactions: Rec[] } =>
    Array.isArray((r as { transactions?: unknown })?.transactions),
  );
}

/** Every record of the saved real responses in test/fixtures/nftport, with the contract it belongs to. */
export function realRecords(): Rec[] {
  const out: Rec[] = [];
  const seen = new Set<string>();
  // Whole saved responses first, the reference excerpts (e*-reference.json, a few rows of them) last, so that the
  // load order, which breaks ties within a block, is the order the real upstream sent.
  const files = readdirSync(FIXTURES)
    .filter((f) => f.endsWith(".json"))
    .sort((a, b) => Number(a.includes("-reference")) - Number(b.includes("-reference")) || a.localeCompare(b));
  for (const file of files) {
    for (const r of realPages(readFileSync(join(FIXTURES, file), "utf8")).flatMap((page) => page.transactions)) {
      // The same row saved twice (an excerpt of a saved page, a repeated call) is one record.
      const key = stringifyJson(r);
      if (seen.has(key)) continue;
      seen.add(key);
      // The load order, which the server uses to order rows of one block as the upstream did.
      Object.defineProperty(r, "__seq", { value: 1_000_000 + out.length, enumerable: false, configurable: true });
      out.push(r);
    }
  }
  return out;
}

/** Synthetic contracts plus the real records, grouped by contract. */
export function standardDataset(perContract = 130): Dataset {
  const byContract = new Map<string, Rec[]>();
  byContract.set(CONTRACT_721, syntheticRecords(CONTRACT_721, perContract, 16_000_000));
  byContract.set(CONTRACT_1155, syntheticRecords(CONTRACT_1155, perContract, 16_000_500, true));
  byContract.set(EMPTY_CONTRACT, []);
  for (const r of realRecords()) {
    const contract = String(
      (r.nft as { contract_address?: string })?.contract_address ?? r.contract_address,
    ).toLowerCase();
    const list = byContract.get(contract) ?? [];
    list.push(r);
    byContract.set(contract, list);
  }
  return { byContract };
}
