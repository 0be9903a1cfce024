/**
 * A local upstream in a process of its own, so that its CPU and memory are not counted against the client under
 * test: `node --import tsx bench/upstream.ts <nftport|mailjet|opensea> [options JSON]` prints `{"url": …}` on its first
 * line and serves until its standard input closes (the bench ends it with `startUpstream(...).close()`).
 *
 * nftport serves the saved real records (test/fixtures/nftport), plus the pages the benches ask for:
 * - BIG_INT_CONTRACT token 11: the real 50-record page of contract 0xa49a…efc8 token 11 with one quantity
 *   beyond 2^53 (2^53 + 1);
 * - one synthetic ERC-721 contract per entry of `paged` ({ "0x…": pages }), 50 records a page.
 * mailjet answers `latencyMs` after each request arrived (its own work inside that time).
 * opensea serves the saved real answers (test/fixtures/opensea) and the collection `bench` of BENCH_CONTRACT with
 * `events` events (default 1,000) cycled from the real BAYC ones.
 */

import { startMailjet } from "../test/upstreams/mailjet.js";
import type { Rec } from "../test/upstreams/nftport.js";
import { startNftport } from "../test/upstreams/nftport.js";
import { standardDataset, syntheticRecords } from "../test/upstreams/nftport-data.js";
import { type OpenSeaEvent, startOpenSea } from "../test/upstreams/opensea.js";
import { baycEvents, openseaDataset } from "../test/upstreams/opensea-data.js";

export const REAL_CONTRACT = "0xa49a0e5ef83cf89ac8aae182f22e6464b229efc8";
export const REAL_TOKEN = "11";
export const BIG_INT_CONTRACT = "0x7777777777777777777777777777777777777777";
/** 2^53 + 1: the smallest integer a double cannot hold. */
export const BIG_QUANTITY = 9007199254740993n;

export interface NftportOptions {
  /** Synthetic contracts and how many full pages of 50 each holds. */
  paged?: Record<string, number>;
  /** The key's quota per 1-second window, and whether answers carry `x-served-at` (test/upstreams/nftport.ts). */
  requestsPerSecond?: number;
  stampServedAt?: boolean;
}

export interface MailjetOptions {
  latencyMs?: number;
}

/** An OpenSea collection (`bench`) of one contract holding this many events, cycled from the real BAYC ones. */
export const BENCH_CONTRACT = "0x8888888888888888888888888888888888888888";
export interface OpenSeaOptions {
  events?: number;
}

/** `count` events of BENCH_CONTRACT: the real BAYC listings, offers, sales and transfers in turn, newest first. */
export function benchEvents(count: number): OpenSeaEvent[] {
  const real = baycEvents().filter(
    (e) => (e.asset as { identifier?: string } | undefined)?.identifier !== undefined || e.nft,
  );
  return Array.from({ length: count }, (_, i) => {
    const event = real[i % real.length]!;
    const key = event.nft ? "nft" : "asset";
    return {
      ...event,
      event_timestamp: 1_764_000_000 - i,
      [key]: { ...(event[key] as object), contract: BENCH_CONTRACT, collection: "bench" },
    };
  });
}

async function start(
  kind: string,
  options: NftportOptions & MailjetOptions & OpenSeaOptions,
): Promise<{ url: string }> {
  if (kind === "mailjet") return startMailjet({ latencyMs: options.latencyMs ?? 0 });
  if (kind === "opensea") {
    const dataset = openseaDataset();
    dataset.contracts.set(BENCH_CONTRACT, { collection: "bench", contract_standard: "erc721", name: "Bench" });
    dataset.collections.set("bench", benchEvents(options.events ?? 1000));
    return startOpenSea(dataset);
  }
  if (kind !== "nftport") throw new Error(`unknown upstream ${kind}`);
  const dataset = standardDataset();
  const real = dataset.byContract.get(REAL_CONTRACT)!;
  dataset.byContract.set(BIG_INT_CONTRACT, withOneBigQuantity(real));
  let block = 10_000_000;
  for (const [contract, pages] of Object.entries(options.paged ?? {})) {
    dataset.byContract.set(contract.toLowerCase(), syntheticRecords(contract.toLowerCase(), pages * 50, block));
    block += pages * 50;
  }
  return startNftport(dataset, {
    ...(options.requestsPerSecond === undefined ? {} : { requestsPerSecond: options.requestsPerSecond }),
    ...(options.stampServedAt ? { stampServedAt: true } : {}),
  });
}

/** The real page again, under another contract, with the first record's quantity beyond 2^53. */
function withOneBigQuantity(records: Rec[]): Rec[] {
  return records.map((record, i) => {
    const copy = structuredClone(record);
    (copy.nft as { contract_address: string }).contract_address = BIG_INT_CONTRACT;
    Object.defineProperty(copy, "__seq", { value: (record as { __seq?: number }).__seq, enumerable: false });
    if (i === 0) copy.quantity = BIG_QUANTITY;
    return copy;
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [kind = "", json = "{}"] = process.argv.slice(2);
  const { url } = await start(kind, JSON.parse(json));
  process.stdout.write(`${JSON.stringify({ url })}\n`);
  process.stdin.resume();
  process.stdin.on("end", () => process.exit(0));
}
