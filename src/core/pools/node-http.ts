/**
 * The connection pool of upstream calls when no proxy is set: Node's own HTTP client (keep-alive agents of
 * node:http / node:https) behind the one method of undici's Dispatcher that the dispatcher pool (dispatcher.ts)
 * calls, `dispatch` with the handler API.
 *
 * Why not undici's Agent: undici parses HTTP with llhttp compiled to WebAssembly, and V8 compiles that module on
 * the first connection of a process: 20–30 ms and about 30 MiB of peak RSS (measured: a process sending 10,000
 * messages to Mailjet peaked 35 MiB higher than the same calls through node:http), and loading undici itself
 * adds some 15 MiB. Node's parser is the same llhttp, built in. undici is still what runs behind a proxy
 * (choose.ts loads it only then).
 *
 * What the calls rely on, kept from undici's Agent: pooled keep-alive connections (at most `connections` per
 * origin; an idle one is closed after 4 s, sooner when the server's `Keep-Alive: timeout` says so), a connection
 * that does not open within 10 s fails with UND_ERR_CONNECT_TIMEOUT (nothing was sent: core/http.ts may retry
 * it), and connection errors keep their codes (ECONNREFUSED, ECONNRESET, …).
 */
import type { ClientRequest, Agent as HttpAgent, IncomingMessage, RequestOptions } from "node:http";
import type { Socket } from "node:net";
import type { Dispatcher } from "undici";

const IDLE_TIMEOUT_MS = 4_000;
const CONNECT_TIMEOUT_MS = 10_000;

type Transport = { Agent: typeof HttpAgent; request: (options: RequestOptions) => ClientRequest };

// node:https (and TLS with it) loads only for the first https origin. A built-in by name works in a bundle too
// (the Node-RED package's CommonJS, where import.meta is empty).
const load = (id: string): unknown => process.getBuiltinModule(id);

/** The error of a connection that did not open in time: undici's code, which core/http.ts reads as "not sent". */
class ConnectTimeout extends Error {
  readonly code = "UND_ERR_CONNECT_TIMEOUT";
}

export class NodeHttpPool {
  readonly #connections: number;
  readonly #agents = new Map<string, { transport: Transport; agent: HttpAgent }>();
  readonly #origins = new Map<string, URL>();

  constructor(options: { connections: number }) {
    this.#connections = options.connections;
  }

  #agentFor(protocol: string) {
    let entry = this.#agents.get(protocol);
    if (!entry) {
      const transport = load(protocol === "https:" ? "node:https" : "node:http") as Transport;
      const agent = new transport.Agent({
        keepAlive: true,
        maxSockets: this.#connections,
        // The idle time of a pooled connection (Node applies it to free sockets, lowered by the server's hint).
        timeout: IDLE_TIMEOUT_MS,
        scheduling: "lifo",
      });
      entry = { transport, agent };
      this.#agents.set(protocol, entry);
    }
    return entry;
  }

  /** One request, its answer reported to `handler` as undici would; false like undici's when busy (never here). */
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = this.#originOf(String(options.origin));
    const { transport, agent } = this.#agentFor(origin.protocol);
    const request = transport.request({
      protocol: origin.protocol,
      hostname: origin.hostname.replace(/^\[|\]$/g, ""),
      port: origin.port,
      method: options.method,
      path: options.path,
      headers: options.headers as Record<string, string> | undefined,
      agent,
    });
    const exchange = new NodeExchange(request, handler);
    handler.onRequestStart?.(exchange, {});
    if (!exchange.aborted) request.end(options.body as string | Buffer | undefined);
    return true;
  }

  /** The parsed origin, once per origin (every call of an upstream shares one). */
  #originOf(origin: string): URL {
    let url = this.#origins.get(origin);
    if (!url) {
      url = new URL(origin);
      this.#origins.set(origin, url);
    }
    return url;
  }

  async close(): Promise<void> {
    for (const { agent } of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }

  async destroy(): Promise<void> {
    await this.close();
  }
}

/** One request on node:http, reporting to an undici dispatch handler, and the controller that handler is given. */
class NodeExchange implements Dispatcher.DispatchController {
  #done = false;
  #aborted: Error | null = null;
  #response: IncomingMessage | undefined;
  #connectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly request: ClientRequest,
    private readonly handler: Dispatcher.DispatchHandler,
  ) {
    request.on("socket", (socket: Socket) => this.#watchConnect(socket));
    request.on("error", this.#fail);
    request.on("response", (res: IncomingMessage) => this.#answer(res));
  }

  get aborted() {
    return this.#aborted !== null;
  }
  get paused() {
    return this.#response?.isPaused() ?? false;
  }
  get reason() {
    return this.#aborted;
  }
  abort(reason: Error) {
    this.#aborted = reason;
    this.#fail(reason);
    // Once the answer has begun, destroy the answer, not the request. An answer already parsed to its end (all of
    // it came in one read) still has its "end" to emit: `request.destroy` lets it (it dumps the answer), and on
    // "end" Node hands the socket back to the keep-alive agent, removing the request's error listener, before the
    // socket emits the error it was destroyed with (a tick later): an uncaught exception. An answer destroyed
    // before its "end" never emits it, so the socket is destroyed while the request still listens, and the
    // agent drops it instead of reusing it.
    if (this.#response) this.#response.destroy(reason);
    else this.request.destroy(reason);
  }
  pause() {
    this.#response?.pause();
  }
  resume() {
    this.#response?.resume();
  }

  readonly #fail = (error: Error) => {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#connectTimer);
    this.handler.onResponseError?.(this, error);
  };

  #watchConnect(socket: Socket): void {
    if (!socket.connecting) return;
    this.#connectTimer = setTimeout(() => {
      const error = new ConnectTimeout(`Connect timeout (${CONNECT_TIMEOUT_MS} ms)`);
      this.#fail(error);
      this.request.destroy(error);
    }, CONNECT_TIMEOUT_MS);
    socket.once("connect", () => clearTimeout(this.#connectTimer));
  }

  #answer(res: IncomingMessage): void {
    this.#response = res;
    if (this.#done) return void res.destroy();
    this.handler.onResponseStart?.(this, res.statusCode ?? 0, res.headers, res.statusMessage);
    res.on("data", (chunk: Buffer) => {
      if (!this.#done) this.handler.onResponseData?.(this, chunk);
    });
    res.on("end", () => {
      if (this.#done) return;
      this.#done = true;
      this.handler.onResponseEnd?.(this, res.trailers);
    });
    res.on("error", this.#fail);
    // A connection that closes midway through the body ends the answer without "end".
    res.on("close", () => {
      if (!res.complete) this.#fail(Object.assign(new Error("other side closed"), { code: "ECONNRESET" }));
    });
  }
}
