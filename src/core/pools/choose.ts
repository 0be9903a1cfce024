/**
 * The one place that picks the HTTP engine of a process's upstream calls: undici's proxy agent behind a proxy
 * (HTTPS_PROXY / HTTP_PROXY / NO_PROXY), else Node's own client, and undici's Agent for paged reads (NFTPort,
 * OpenSea). A workflow host picks its own engine instead (its request helper) and puts it in the config it builds.
 *
 * Nothing runs when this module loads (undici and node:http load on first use), so that a host bundle that never
 * calls `poolsFor` leaves them out.
 */
import { createRequire } from "node:module";
import type { Dispatcher } from "undici";
import { proxySettings } from "../env.js";
import type { UpstreamPool } from "../upstream-pool.js";
import { dispatcherPool } from "./dispatcher.js";
import { NodeHttpPool } from "./node-http.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface UpstreamPools {
  /** Every upstream's calls. */
  pool: UpstreamPool;
  /** Paged reads (NFTPort, OpenSea), when not `pool`. */
  paging?: UpstreamPool | undefined;
}

const chosen = new Map<string, UpstreamPools>();
let pagingPool: UpstreamPool | undefined;

// undici loads only when it is used: behind a proxy, or on the first NFTPort call.
const load = (id: string): unknown => createRequire(import.meta.url)(id);

/** The pools of one proxy setting, shared by every config that has it. */
export function poolsFor(env: Env): UpstreamPools {
  // Checked here, named when refused: undici would say only "Invalid URL", and at the first call.
  const { httpProxy, httpsProxy, noProxy } = proxySettings(env);
  const key = JSON.stringify([httpProxy, httpsProxy, noProxy]);
  let pools = chosen.get(key);
  if (!pools) {
    if (httpProxy || httpsProxy) {
      // Always pass all three: undici would otherwise read process.env, and a config built from another record
      // (a test, a library user) must not pick up this process's proxy.
      const { EnvHttpProxyAgent } = load("undici") as typeof import("undici");
      const agent = new EnvHttpProxyAgent({
        httpProxy: httpProxy ?? "",
        httpsProxy: httpsProxy ?? "",
        noProxy: noProxy ?? "",
        connections: 64,
      });
      pools = { pool: dispatcherPool(agent) };
    } else {
      pagingPool ??= dispatcherPool(lazyUndiciAgent());
      pools = { pool: dispatcherPool(new NodeHttpPool({ connections: 64 })), paging: pagingPool };
    }
    chosen.set(key, pools);
  }
  return pools;
}

/**
 * The pool of paged reads (NFTPort, OpenSea) when no proxy is set: undici's Agent, loaded on the first call.
 * NFTPort answers are pages of ~30 KB read back to back (`run --all`), where node:http's client cost about 100 µs of CPU a page more than
 * undici's dispatcher (a 50-record page through runNode: 1.2–1.3× a bare undici request instead of 0.85–0.95×) and
 * its garbage took a 600-page `run --all` from 59 to 91 MiB peak RSS (undici: 74 MiB, flat). Mail and RPC keep the
 * node:http pool: few, larger answers, where undici's load and WebAssembly compile (~60 ms, ~20 MiB) do not pay back.
 */
function lazyUndiciAgent(): Pick<Dispatcher, "dispatch"> {
  let agent: Dispatcher | undefined;
  return {
    dispatch(options, handler) {
      agent ??= new (undiciAgent())({ connections: 64 });
      return agent.dispatch(options, handler);
    },
  };
}

/**
 * undici's Agent class alone: its module and the 23 it needs load in ~20 ms, where `require("undici")` loads 110
 * (fetch, cookies, WebSocket, Node's own copy of undici) in ~65 ms, which a `chainmail run` paid on every start.
 * undici 7 has no exports map; should a release move the file, the whole package still serves.
 */
function undiciAgent(): typeof import("undici").Agent {
  try {
    return load("undici/lib/dispatcher/agent.js") as typeof import("undici").Agent;
  } catch {
    return (load("undici") as typeof import("undici")).Agent;
  }
}
