/**
 * A TCP proxy in front of a JSON-RPC node (anvil) that can cut its WebSocket connections: HTTP requests pass as they
 * are, while `dropSockets()` ends every upgraded connection and `refuseSockets` turns new upgrades away, as a
 * provider's WebSocket gateway does when it restarts or is overloaded.
 */
import { createConnection, createServer, type Socket } from "node:net";

export interface TcpProxy {
  url: string;
  /** While true, a connection that asks for a WebSocket is closed before it reaches the node. */
  refuseSockets: boolean;
  /** WebSocket connections opened through the proxy so far. */
  socketsOpened: number;
  /** Ends every WebSocket connection now open. */
  dropSockets(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    const upstream = createConnection({ host: hostname, port: Number(port) });
    open.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
      sockets.delete(client);
    };
    client.once("data", (first: Buffer) => {
      if (/^upgrade:\s*websocket/im.test(first.toString("latin1"))) {
        if (proxy.refuseSockets) return end();
        proxy.socketsOpened++;
        sockets.add(client);
      }
      upstream.write(first);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  const proxy: TcpProxy = {
    url: `http://127.0.0.1:${address.port}`,
    refuseSockets: false,
    socketsOpened: 0,
    dropSockets: () => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return proxy;
}
