/**
 * The service's upstream reads shared between its callers (core/pools/shared-reads.ts): NFTPort's and OpenSea's
 * pools wrapped once per app, and a second config for callers that send `Cache-Control: no-cache`.
 */
import type { Config } from "../core/config.js";
import { type SharedReads, sharedReads } from "../core/pools/shared-reads.js";
import type { UpstreamPool } from "../core/upstream-pool.js";
import type { ServerSettings } from "./settings.js";

export interface UpstreamSharing {
  /** The config of a request that takes shared answers. */
  config: Config;
  /** The config of a request that asked for a fresh answer. */
  fresh: Config;
  /** Totals over the shared pools (for /metrics). */
  stats(): ReturnType<SharedReads["stats"]>;
}

export function shareUpstreamReads(config: Config, cache: ServerSettings["cache"]): UpstreamSharing {
  // NFTPort and OpenSea usually read through the same paging pool: one sharing layer for it.
  const shared = new Map<UpstreamPool, SharedReads>();
  const share = (pool: UpstreamPool) => {
    let found = shared.get(pool);
    if (!found) {
      found = sharedReads(pool, cache);
      shared.set(pool, found);
    }
    return found;
  };
  const nftport = share(config.nftport.pool ?? config.pool);
  const opensea = share(config.opensea.pool ?? config.pool);
  const withPools = (pick: (s: SharedReads) => UpstreamPool): Config => ({
    ...config,
    nftport: { ...config.nftport, pool: pick(nftport) },
    opensea: { ...config.opensea, pool: pick(opensea) },
  });
  const stats = () => {
    const sum = { upstream: 0, joined: 0, cached: 0, entries: 0, bytes: 0 };
    for (const one of shared.values()) {
      for (const [name, value] of Object.entries(one.stats())) sum[name as keyof typeof sum] += value;
    }
    return sum;
  };
  return { config: withPools((s) => s.pool), fresh: withPools((s) => s.fresh), stats };
}

/** Whether a request's `Cache-Control` asks for an answer not taken from a cache (RFC 9111 §5.2.1). */
export function wantsFresh(cacheControl: string | string[] | undefined): boolean {
  if (cacheControl === undefined) return false;
  const text = (Array.isArray(cacheControl) ? cacheControl.join(",") : cacheControl).toLowerCase();
  if (text.length > 1024) return true;
  return text.split(",").some((directive) => {
    const d = directive.trim();
    return d === "no-cache" || d === "no-store" || /^max-age\s*=\s*"?0"?$/.test(d);
  });
}
