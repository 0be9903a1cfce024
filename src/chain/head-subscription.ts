/**
 * Following the head: when a caught-up indexer waits for the next block. Where the node offers subscriptions
 * (`eth_subscribe` `newHeads` over a WebSocket: INDEX_RPC_WS_URL, else the endpoint's address with ws:// for
 * http:// and wss:// for https://),
 * a new head wakes the indexer at once; the poll interval stays as the safety net. On any failure (no WebSocket,
 * no `eth_subscribe`, the connection dropping or going quiet while polls find new heads) it falls back to polling
 * and subscribes again later, backing off. A head only wakes the indexer, which then reads from its cursor to the
 * node's `latest`, so no block is ever skipped, whatever the subscription misses.
 */
import { WebSocket } from "undici";

/** How the indexer learns of new heads right now. */
export type HeadMode = "subscription" | "polling";

export interface HeadWaitOptions {
  /** The poll interval: the longest wait, subscribed or not. */
  pollIntervalMs: number;
  signal?: AbortSignal | undefined;
  /** Told each time the mode changes (first subscribed, fallen back to polling, subscribed again). */
  onMode?: ((mode: HeadMode) => void) | undefined;
}

/** First wait before subscribing again after a failure; doubles up to RESUBSCRIBE_MAX_MS. */
const RESUBSCRIBE_MIN_MS = 1000;
const RESUBSCRIBE_MAX_MS = 60_000;
/** Polls in a row that found a head the subscription never announced: it is taken as dead and opened again. */
const QUIET_POLLS = 3;
/** A notification is a header: anything larger is not read. */
const MAX_MESSAGE_CHARS = 64 * 1024;

/** The WebSocket address of a JSON-RPC endpoint: the same URL, ws:// for http:// and wss:// for https://. */
export function subscriptionUrl(rpcUrl: string): string | undefined {
  if (!URL.canParse(rpcUrl)) return undefined;
  const url = new URL(rpcUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

/** Waits for the next head: announced by the subscription, or found by the next poll. */
export class HeadWaiter {
  private socket: WebSocket | undefined;
  private mode: HeadMode | undefined;
  /** The highest head the subscription announced, and the one an early wake-up was last given for. */
  private announced = -1;
  private wokenFor = -1;
  private wake: ((always?: boolean) => void) | undefined;
  private resubscribeAt = 0;
  private backoffMs = RESUBSCRIBE_MIN_MS;
  private quietPolls = 0;
  /** The head the indexer last waited at. */
  private lastHead = -1;
  private closed = false;
  private readonly url: string | undefined;

  /** `url`: the node's WebSocket (ws:// or wss://); undefined: polling only. */
  constructor(
    url: string | undefined,
    private readonly options: HeadWaitOptions,
  ) {
    this.url = url;
    options.signal?.addEventListener("abort", () => this.close(), { once: true });
  }

  /**
   * Resolves when a head above `head` (the node's `latest` the indexer last read) is announced, at once when one
   * already was, or after the poll interval.
   */
  async next(head: number): Promise<void> {
    if (this.closed) return;
    this.checkQuiet(head);
    this.subscribe();
    if (this.announced > head && this.announced > this.wokenFor) {
      this.wokenFor = this.announced;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollIntervalMs);
      this.wake = (always) => {
        if (always || this.closed || this.announced > head) done();
      };
      if (this.closed) done();
    });
    if (this.announced > head) this.wokenFor = Math.max(this.wokenFor, this.announced);
  }

  close(): void {
    this.closed = true;
    this.drop();
    this.wake?.();
  }

  /**
   * The head moved since the last wait to `head`, above what the subscription announced, several times in a row: it
   * has gone quiet. (A head that did not move says nothing: an idle chain announces nothing either.)
   */
  private checkQuiet(head: number): void {
    const moved = head > this.lastHead;
    this.lastHead = Math.max(this.lastHead, head);
    if (this.mode !== "subscription" || !this.socket) return;
    if (head <= this.announced) this.quietPolls = 0;
    else if (moved) this.quietPolls++;
    if (this.quietPolls >= QUIET_POLLS) this.failed();
  }

  private subscribe(): void {
    if (this.closed || this.socket || !this.url || Date.now() < this.resubscribeAt) return;
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.url);
    } catch {
      this.failed();
      return;
    }
    this.socket = socket;
    this.quietPolls = 0;
    socket.addEventListener("open", () => {
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    });
    socket.addEventListener("message", (event) => {
      if (socket === this.socket) this.onMessage(event.data);
    });
    // An error is followed by close; either way the subscription is gone.
    socket.addEventListener("close", () => {
      if (socket === this.socket) this.failed();
    });
    socket.addEventListener("error", () => {
      if (socket === this.socket) this.failed();
    });
  }

  private onMessage(data: unknown): void {
    const message = messageOf(data);
    if (message === "subscribed") {
      this.backoffMs = RESUBSCRIBE_MIN_MS;
      this.setMode("subscription");
      // A block made between the last look at the head and now was announced to nobody: look once more.
      this.wake?.(true);
    } else if (message === "refused") {
      this.failed();
    } else if (message !== undefined) {
      this.announced = Math.max(this.announced, message.head);
      this.quietPolls = 0;
      this.wake?.();
    }
  }

  /** Back to polling; subscribing again after a back-off. */
  private failed(): void {
    this.drop();
    if (this.closed) return;
    this.resubscribeAt = Date.now() + this.backoffMs;
    this.backoffMs = Math.min(RESUBSCRIBE_MAX_MS, this.backoffMs * 2);
    this.setMode("polling");
  }

  private drop(): void {
    const socket = this.socket;
    this.socket = undefined;
    try {
      socket?.close();
    } catch {
      // already closing
    }
  }

  private setMode(mode: HeadMode): void {
    if (this.mode === mode) return;
    this.mode = mode;
    this.options.onMode?.(mode);
  }
}

/**
 * What a message of the socket says: the subscription is on, it is refused (the node has no subscriptions, or said
 * something unreadable), a new head; undefined for anything else.
 */
export function messageOf(data: unknown): "subscribed" | "refused" | { head: number } | undefined {
  if (typeof data !== "string" || data.length > MAX_MESSAGE_CHARS) return "refused";
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return "refused";
  }
  if (typeof message !== "object" || message === null) return "refused";
  const m = message as Record<string, unknown>;
  if (Object.hasOwn(m, "id") && m.id === 1) {
    // The answer to eth_subscribe: a subscription id, or an error.
    return Object.hasOwn(m, "result") && typeof m.result === "string" ? "subscribed" : "refused";
  }
  if (!Object.hasOwn(m, "method") || m.method !== "eth_subscription") return undefined;
  const head = headOf(m.params);
  return head === undefined ? undefined : { head };
}

/** The block number of a `newHeads` notification (`params.result.number`, hex), if it holds one. */
function headOf(params: unknown): number | undefined {
  if (typeof params !== "object" || params === null || !Object.hasOwn(params, "result")) return undefined;
  const result = (params as { result: unknown }).result;
  if (typeof result !== "object" || result === null || !Object.hasOwn(result, "number")) return undefined;
  const number = (result as { number: unknown }).number;
  if (typeof number !== "string" || !/^0x[0-9a-fA-F]{1,14}$/.test(number)) return undefined;
  const value = Number.parseInt(number.slice(2), 16);
  return Number.isSafeInteger(value) ? value : undefined;
}
