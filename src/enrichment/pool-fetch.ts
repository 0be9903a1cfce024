/**
 * Token metadata fetched through an `UpstreamPool` (a workflow host's engine: n8n's request helper, Node's client
 * in Node-RED): the same limits as metadata-fetch.ts (deadline, size, at most three redirects, each URL checked by
 * address-guard.ts), but the host connects, so a host name's resolved addresses are the host's to check (n8n's own
 * SSRF settings). No timer, `process` or HTTP library of its own, so that n8n's scanner accepts the bundle.
 */
import { AttemptTimeout, type UpstreamPool } from "../core/upstream-pool.js";
import { urlRefusal } from "./address-guard.js";
import { type Fetched, type FetchLimits, MAX_REDIRECTS, type MetadataFetch } from "./metadata.js";

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) ?? "";

export function poolFetch(pool: UpstreamPool): MetadataFetch {
  return async (url: string, limits: FetchLimits): Promise<Fetched> => {
    const deadline = Date.now() + limits.timeoutMs;
    let current = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const refusal = urlRefusal(current, { allowPrivate: limits.allowPrivate });
      if (refusal) return { ok: false, url: current, why: `refused: ${refusal}` };
      const left = deadline - Date.now();
      if (left <= 0) return { ok: false, url: current, why: `no answer within ${limits.timeoutMs} ms` };
      let answer: Awaited<ReturnType<UpstreamPool["exchange"]>>;
      try {
        answer = await pool.exchange({
          method: "GET",
          url: current,
          headers: { accept: "application/json, text/plain;q=0.5" },
          timeoutMs: left,
          maxBodyBytes: limits.maxBytes,
          signal: limits.signal,
        });
      } catch (err) {
        if (err instanceof AttemptTimeout)
          return { ok: false, url: current, why: `no answer within ${limits.timeoutMs} ms` };
        return { ok: false, url: current, why: err instanceof Error ? err.message : String(err) };
      }
      const location = header(answer.headers.location);
      if (answer.status >= 300 && answer.status < 400 && location) {
        try {
          current = new URL(location, current).toString();
        } catch {
          return { ok: false, url: current, why: `a redirect to what is not a URL (HTTP ${answer.status})` };
        }
        continue;
      }
      if (answer.status !== 200) return { ok: false, url: current, why: `HTTP ${answer.status}` };
      const body = Buffer.from(answer.body, "utf8");
      if (body.length > limits.maxBytes)
        return { ok: false, url: current, why: `larger than ${limits.maxBytes} bytes` };
      const contentType = header(answer.headers["content-type"]).split(";")[0]!.trim().toLowerCase();
      return { ok: true, url: current, contentType, body };
    }
    return { ok: false, url: current, why: `more than ${MAX_REDIRECTS} redirects` };
  };
}
