/**
 * One bounded GET of a token's metadata: within a deadline (redirects included), at most `maxBytes` of answer, at
 * most three redirects, each target checked again (address-guard.ts). The connection's own DNS lookup refuses a
 * host that resolves to a private address, so a name that resolves elsewhere by the time of the connection (DNS
 * rebinding) is refused too. Node's own client with no pooled connection: a guarded socket is never reused for
 * another host. Never throws: a refusal or a failure comes back as `why`.
 *
 * It connects directly, not through HTTPS_PROXY: a proxy would resolve the host itself, past the guard.
 */
import { type LookupAddress, lookup } from "node:dns";
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { mayReach, type PrivateAllowance, urlRefusal } from "./address-guard.js";
import { type Fetched, type FetchLimits, MAX_REDIRECTS } from "./metadata.js";

/** The system's lookup, refusing a host any of whose addresses is private (unless allowed). */
export function guardedLookup(allowPrivate: PrivateAllowance): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      const refused = addresses.find((a) => !mayReach(a.address, allowPrivate));
      if (refused) {
        const error = Object.assign(new Error(`${hostname} resolves to a private address (${refused.address})`), {
          code: "EPRIVATEADDRESS",
        });
        return callback(error, "", 0);
      }
      if ((options as { all?: boolean }).all)
        return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** GETs `url`, following redirects; resolves to the body or why there is none. */
export async function guardedGet(url: string, limits: FetchLimits): Promise<Fetched> {
  const deadline = Date.now() + limits.timeoutMs;
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const refusal = urlRefusal(current, { allowPrivate: limits.allowPrivate });
    if (refusal) return { ok: false, url: current, why: `refused: ${refusal}` };
    const left = deadline - Date.now();
    if (left <= 0) return { ok: false, url: current, why: `no answer within ${limits.timeoutMs} ms` };
    const answer = await getOnce(current, left, limits);
    if (!answer.ok || !("location" in answer)) return answer;
    current = answer.location;
  }
  return { ok: false, url: current, why: `more than ${MAX_REDIRECTS} redirects` };
}

type Once = Fetched | { ok: true; url: string; location: string };

function getOnce(url: string, timeoutMs: number, limits: FetchLimits): Promise<Once> {
  return new Promise((resolve) => {
    const parsed = new URL(url);
    const options: RequestOptions = {
      method: "GET",
      agent: false,
      lookup: guardedLookup(limits.allowPrivate),
      headers: { accept: "application/json, text/plain;q=0.5", "user-agent": "chainmail" },
    };
    let settled = false;
    const finish = (outcome: Once) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      limits.signal?.removeEventListener("abort", onAbort);
      req.destroy();
      resolve(outcome);
    };
    const fail = (why: string) => finish({ ok: false, url, why });
    const onAbort = () => fail("cancelled");
    const req = (parsed.protocol === "https:" ? httpsRequest : httpRequest)(parsed, options, (res) =>
      read(res, url, limits.maxBytes, finish),
    );
    const timer = setTimeout(() => fail(`no answer within ${limits.timeoutMs} ms`), timeoutMs);
    req.on("error", (err: Error & { code?: string }) => fail(err.message || err.code || "connection failed"));
    if (limits.signal?.aborted) return fail("cancelled");
    limits.signal?.addEventListener("abort", onAbort, { once: true });
    req.end();
  });
}

function read(res: IncomingMessage, url: string, maxBytes: number, finish: (outcome: Once) => void): void {
  const status = res.statusCode ?? 0;
  const location = res.headers.location;
  if (status >= 300 && status < 400 && location) {
    res.resume();
    let next: string;
    try {
      next = new URL(location, url).toString();
    } catch {
      finish({ ok: false, url, why: `a redirect to what is not a URL (HTTP ${status})` });
      return;
    }
    finish({ ok: true, url, location: next });
    return;
  }
  if (status !== 200) {
    res.resume();
    finish({ ok: false, url, why: `HTTP ${status}` });
    return;
  }
  const announced = Number(res.headers["content-length"]);
  if (Number.isFinite(announced) && announced > maxBytes) {
    finish({ ok: false, url, why: `larger than ${maxBytes} bytes (${announced})` });
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  res.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) finish({ ok: false, url, why: `larger than ${maxBytes} bytes` });
    else chunks.push(chunk);
  });
  res.on("error", (err) => finish({ ok: false, url, why: err.message }));
  res.on("aborted", () => finish({ ok: false, url, why: "the answer broke off" }));
  res.on("end", () => {
    const contentType = String(res.headers["content-type"] ?? "")
      .split(";")[0]!
      .trim()
      .toLowerCase();
    finish({ ok: true, url, contentType, body: Buffer.concat(chunks) });
  });
}
