/**
 * email-send side by side with the same job written by hand with Mailjet's SDK: one-recipient messages through
 * `runNode(emailSend, …)` (bench/email-send.mjs, MAILJET_CONCURRENCY 4) and through node-mailjet in 50-message
 * calls with 4 workers (bench/peers/node-mailjet-send.mjs), each client a process of its own (peak RSS from GNU
 * time), against the local Mailjet server in a third process that answers every call 20 ms after it arrived.
 * Two sizes 10× apart (1,000 and 10,000 messages) show whether memory stays flat. A third client, the bare floor
 * (bench/peers/bare-http-send.mjs: node:http, JSON.stringify / JSON.parse, nothing else), shows what the machine
 * allows at that moment. Rounds are interleaved; times and RSS are medians, and the ratios between clients are the
 * medians of each round's ratio (both measured within seconds of each other, so load drifting between rounds weighs
 * less).
 *
 * Time is the send itself, as each client measures it around its one call (building the input and starting Node
 * are left out; the process's wall time is printed too). Ideal = calls × the server's delay / concurrency: what
 * a client that costs nothing would take (200 calls × 20 ms / 4 = 1.00 s for 10,000 messages).
 */
import { join } from "node:path";
import { API_KEY, SECRET_KEY } from "../test/upstreams/mailjet.js";
import { interleaved, loadAverage, median, type ProcessRun, ratio, runProcess, startUpstream } from "./measure.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const LATENCY_MS = 20;
const CONCURRENCY = 4;
const PER_CALL = 50;
const SIZES = [10_000, 1_000] as const;
const OURS = join(import.meta.dirname, "email-send.mjs");
const PEER = join(import.meta.dirname, "peers", "node-mailjet-send.mjs");
const FLOOR = join(import.meta.dirname, "peers", "bare-http-send.mjs");

interface Run extends ProcessRun {
  sendMs: number;
}

/** Runs one client process and checks that every message came back a success. */
async function client(argv: string[], env: Record<string, string>, messages: number): Promise<Run> {
  const run = await runProcess(argv, { env });
  const summary = JSON.parse(run.lastLine) as { sendMs: number; sent: number };
  if (summary.sent !== messages) throw new Error(`${argv[1]}: ${summary.sent} of ${messages} sent`);
  return { ...run, sendMs: summary.sendMs };
}

export default async function bench(): Promise<void> {
  const upstream = await startUpstream("mailjet", { latencyMs: LATENCY_MS });
  const node = process.execPath;
  const env = { MAILJET_BASE_URL: upstream.url, MAILJET_CONCURRENCY: String(CONCURRENCY) };
  const ours = (n: number) => () => client([node, OURS, String(n), API_KEY, SECRET_KEY], env, n);
  const sdk = (n: number) => () => client([node, PEER, upstream.url, String(n), API_KEY, SECRET_KEY], {}, n);
  const bare = (n: number) => () => client([node, FLOOR, upstream.url, String(n), API_KEY, SECRET_KEY], {}, n);
  try {
    const runs = await interleaved(ROUNDS, {
      chainmail10000: ours(10_000),
      sdk10000: sdk(10_000),
      bare10000: bare(10_000),
      chainmail1000: ours(1_000),
      sdk1000: sdk(1_000),
      bare1000: bare(1_000),
    });
    const rss = (r: Run[]) => median(r.map((x) => x.rssMiB));
    console.log(
      `one-recipient messages, ${PER_CALL} per call, ${CONCURRENCY} in flight, server delay ${LATENCY_MS} ms; ` +
        `median of ${ROUNDS} interleaved rounds (load ${await loadAverage()}):`,
    );
    console.log(
      "  messages  what            chainmail    node-mailjet  bare floor  ideal     chainmail/ideal  node-mailjet/ideal  chainmail/node-mailjet  chainmail/floor",
    );
    for (const n of SIZES) {
      const a = runs[`chainmail${n}`];
      const b = runs[`sdk${n}`];
      const f = runs[`bare${n}`];
      const ideal = ((n / PER_CALL) * LATENCY_MS) / CONCURRENCY;
      const cell = (v: string, w: number) => v.padEnd(w);
      const row = (what: string, pick: (r: Run) => number, unit: string, withIdeal: boolean) => {
        const get = (r: Run[]) => median(r.map(pick));
        // Round by round: chainmail against each other client of the same round.
        const perRound = (other: Run[]) => `${median(a.map((x, i) => pick(x) / pick(other[i]!))).toFixed(2)}×`;
        console.log(
          `  ${String(n).padStart(8)}  ${cell(what, 14)}  ${cell(`${get(a).toFixed(0)} ${unit}`, 11)}  ` +
            `${cell(`${get(b).toFixed(0)} ${unit}`, 12)}  ${cell(`${get(f).toFixed(0)} ${unit}`, 10)}  ` +
            `${cell(withIdeal ? `${ideal.toFixed(0)} ms` : "", 8)}  ${cell(withIdeal ? ratio(get(a), ideal) : "", 15)}  ` +
            `${cell(withIdeal ? ratio(get(b), ideal) : "", 18)}  ${cell(perRound(b), 22)}  ${perRound(f)}`,
        );
      };
      row("send time", (r) => r.sendMs, "ms", true);
      row("process wall", (r) => r.ms, "ms", false);
      row("process CPU", (r) => r.cpuMs, "ms", false);
      row("peak RSS", (r) => r.rssMiB, "MiB", false);
    }
    const flat = (r: "chainmail" | "sdk") => `${(rss(runs[`${r}10000`]) - rss(runs[`${r}1000`])).toFixed(0)} MiB`;
    console.log(
      `  peak RSS from 1,000 to 10,000 messages: chainmail +${flat("chainmail")}, node-mailjet +${flat("sdk")} ` +
        "(the input itself: 10,000 messages hold about 4 MiB of heap)",
    );
    console.log(
      "  goals at 10,000: send time ≤ 1.15× ideal and ≤ 0.95× node-mailjet's, peak RSS ≤ node-mailjet's; RSS about flat from 1,000",
    );
  } finally {
    await upstream.close();
  }
}
