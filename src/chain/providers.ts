/**
 * What a hosted JSON-RPC provider bills, allows and refuses, as its public documentation states it: the cost of each
 * method in its own unit, the throughput its plans allow, its `eth_getLogs` range rule, and whether an answer over
 * its cap is refused (with words saying so) or may be cut off silently. docs/hosted-providers.md gives each figure
 * with its source. `INDEX_RPC_PROVIDER` names the provider; unset, it is recognised by the endpoint's host.
 *
 * One place for these facts: the pacing (rpc-retry.ts) reads the costs and the budget, the range sizing
 * (range-sizer.ts) the range rule, the completeness checks (completeness.ts) whether answers may be cut.
 */

import type { INDEX_RPC_PROVIDERS } from "../core/env.js";

export type ProviderName = (typeof INDEX_RPC_PROVIDERS)[number];

/** Which `eth_getLogs` ranges a provider serves. Every field is a promise or a refusal its documentation states. */
export interface LogRangeRule {
  /** A range of up to this many blocks is served whatever its answer holds. */
  blocks?: number | undefined;
  /** Beyond `blocks`, a range is served while its answer holds at most this many logs (and refused above). */
  logs?: number | undefined;
  /** No range of more blocks is served, whatever its answer. */
  maxBlocks?: number | undefined;
}

export interface Provider {
  name: ProviderName;
  /** The unit a call's cost is counted in ("CU", "credits"); undefined where calls are not priced by method. */
  unit?: string | undefined;
  /** Cost of one call by method (a batch costs the sum of its calls); `other` for a method not listed. */
  costs?: { methods: Readonly<Record<string, number>>; other: number } | undefined;
  /** Throughput of the provider's smallest paid-for-nothing plan, in `unit`s per second: where pacing starts. */
  unitsPerSecond?: number | undefined;
  /** Requests per second of that plan, where the provider counts requests rather than units. */
  requestsPerSecond?: number | undefined;
  range: LogRangeRule;
  /** True when an answer over the provider's cap is refused with an error, never cut off without one. */
  refusesOverCap: boolean;
}

/** Alchemy's classic compute-unit table (a batch costs the sum of its calls). */
const ALCHEMY_CU: Readonly<Record<string, number>> = {
  eth_blockNumber: 10,
  eth_chainId: 10,
  eth_getTransactionReceipt: 15,
  eth_getBlockByNumber: 16,
  eth_getTransactionByHash: 17,
  eth_getBlockByHash: 21,
  eth_call: 26,
  eth_getLogs: 75,
  eth_getBlockReceipts: 500,
};

export const PROVIDER: Readonly<Record<ProviderName, Provider>> = {
  alchemy: {
    name: "alchemy",
    unit: "CU",
    costs: { methods: ALCHEMY_CU, other: 20 },
    unitsPerSecond: 330,
    // "up to a 2K block range and no limit on the response size, or … any block range with a cap of 10K logs".
    range: { blocks: 2_000, logs: 10_000 },
    refusesOverCap: true,
  },
  infura: {
    name: "infura",
    // "query returned more than 10000 results" (-32005); ranges over 10,000 blocks: "range N exceeds limit of 10000".
    range: { logs: 10_000, maxBlocks: 10_000 },
    refusesOverCap: true,
  },
  quicknode: {
    name: "quicknode",
    // -32614 "eth_getLogs is limited to a 10,000 range" on paid plans.
    range: { maxBlocks: 10_000 },
    refusesOverCap: true,
  },
  generic: { name: "generic", range: {}, refusesOverCap: false },
};

/** The provider `name` names, else the one the endpoint's host belongs to, else `generic`. */
export function providerOf(name: ProviderName | undefined, url: string): Provider {
  if (name) return PROVIDER[name];
  const host = new URL(url).hostname.toLowerCase();
  if (/(^|\.)alchemy(api)?\.(com|io)$/.test(host)) return PROVIDER.alchemy;
  if (/(^|\.)infura\.io$/.test(host)) return PROVIDER.infura;
  if (/(^|\.)(quiknode\.pro|quicknode\.com)$/.test(host)) return PROVIDER.quicknode;
  return PROVIDER.generic;
}

/** What `calls` cost at `provider`, in its unit; undefined where it does not price calls. */
export function costOf(provider: Provider, calls: readonly { method: string }[]): number | undefined {
  const costs = provider.costs;
  if (!costs) return undefined;
  let total = 0;
  for (const call of calls)
    total += Object.hasOwn(costs.methods, call.method) ? costs.methods[call.method]! : costs.other;
  return total;
}
