/**
 * Shared by the token-details tests: contracts that answer fixed ABI values (hand-assembled EVM code, installed with
 * anvil_setCode: no Solidity compiler needed), and a metadata server of our own on loopback whose answers are as
 * hostile as a token URI's host may be.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, "0");
const word = (n: bigint | number) => BigInt(n).toString(16).padStart(64, "0");

/** An ABI-encoded `string` return value (without 0x). */
export function abiStringAnswer(text: string): string {
  const data = Buffer.from(text, "utf8").toString("hex");
  return word(32) + word(data.length / 2) + data.padEnd(Math.ceil(data.length / 64) * 64, "0");
}

/** An ABI-encoded `address` return value (without 0x). */
export const abiAddressAnswer = (address: string) => address.slice(2).toLowerCase().padStart(64, "0");

/**
 * Runtime code answering each 4-byte selector (whatever its arguments) with fixed bytes; any other call reverts.
 * Layout: read the selector; for each, `DUP1 PUSH4 sel EQ PUSH2 branch JUMPI`; else `REVERT(0, 0)`; each branch
 * `JUMPDEST CODECOPY(0, data, len) RETURN(0, len)`; then the data.
 */
export function fixedAnswers(answers: Record<string, string>): string {
  const entries = Object.entries(answers).map(([selector, data]) => [selector.replace(/^0x/, ""), data] as const);
  const head = 6 + entries.length * 11 + 4;
  const branchSize = 16;
  let dataAt = head + entries.length * branchSize;
  let dispatch = "6000" + "35" + "60e0" + "1c";
  let branches = "";
  let data = "";
  entries.forEach(([selector, answer], i) => {
    const branchAt = head + i * branchSize;
    dispatch += `80 63${selector} 14 61${hex(branchAt, 2)} 57`.replace(/ /g, "");
    const length = answer.length / 2;
    branches += `5b 61${hex(length, 2)} 61${hex(dataAt, 2)} 6000 39 61${hex(length, 2)} 6000 f3`.replace(/ /g, "");
    data += answer;
    dataAt += length;
  });
  dispatch += "600080fd";
  return `0x${dispatch}${branches}${data}`;
}

export const SELECTORS = {
  tokenURI: "c87b56dd",
  uri: "0e89341c",
  name: "06fdde03",
  resolver: "0178b8bf",
  ensName: "691f3431",
  addr: "3b3b57de",
  decimals: "313ce567",
  latestRoundData: "feaf968c",
} as const;

export interface MetadataServer {
  url: string;
  /** Paths asked, in order. */
  asked: string[];
  /** Connections opened to it so far. */
  connections(): number;
  close(): Promise<void>;
}

/** A metadata document of token `id`. */
export const tokenDocument = (id: string) => ({
  name: `Loopback Cat #${id}`,
  description: "ignored",
  image: `ipfs://bafy${id}/image.png`,
  attributes: [{ trait_type: "fur", value: "grey" }],
});

/**
 * The metadata server: `/token/<id>.json` answers a good document; the others are hostile: slow, huge (announced or
 * streamed), redirecting (to itself, to a private address, to the good document), of the wrong type, not JSON,
 * not an object, with a name full of control and bidi characters, with images that must not reach a mail.
 */
export async function startMetadataServer(host = "127.0.0.1"): Promise<MetadataServer> {
  const asked: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    asked.push(path);
    const json = (body: unknown, type = "application/json") => {
      res.writeHead(200, { "content-type": type });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    const token = /^\/token\/([0-9a-f]+)\.json$/.exec(path);
    if (token) return json(tokenDocument(token[1]!), "application/json; charset=utf-8");
    switch (path) {
      case "/slow.json":
        // Headers come, the body never does.
        res.writeHead(200, { "content-type": "application/json" });
        res.write("{");
        return;
      case "/silent.json":
        return; // no answer at all
      case "/huge-announced.json":
        res.writeHead(200, { "content-type": "application/json", "content-length": String(64 * 1024 * 1024) });
        res.write("{");
        return;
      case "/huge-streamed.json": {
        res.writeHead(200, { "content-type": "application/json" });
        const chunk = `"${"x".repeat(16 * 1024)}",`;
        res.write('{"name":"big","padding":[');
        let sent = 0;
        const pump = () => {
          while (sent < 4096 && res.write(chunk)) sent++;
          if (sent < 4096 && !res.destroyed) res.once("drain", pump);
          else res.end("0]}");
        };
        pump();
        return;
      }
      case "/loop.json":
        res.writeHead(302, { location: "/loop.json" });
        return res.end();
      case "/to-good.json":
        res.writeHead(301, { location: "/token/7.json" });
        return res.end();
      case "/to-metadata-service.json":
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
        return res.end();
      case "/to-other-loopback.json":
        res.writeHead(307, { location: `http://127.0.0.2:${(server.address() as AddressInfo).port}/token/1.json` });
        return res.end();
      case "/to-ipv6-loopback.json":
        res.writeHead(302, { location: `http://[::ffff:127.0.0.3]:${(server.address() as AddressInfo).port}/` });
        return res.end();
      case "/to-not-a-url.json":
        res.writeHead(302, { location: "http://[::1" });
        return res.end();
      case "/to-localhost.json":
        res.writeHead(302, { location: `http://localhost:${(server.address() as AddressInfo).port}/token/1.json` });
        return res.end();
      case "/html.json":
        return json("<html><body>{}</body></html>", "text/html");
      case "/image.json":
        return json({ name: "a picture" }, "image/png");
      case "/bad.json":
        return json('{"name": "unterminated', "application/json");
      case "/array.json":
        return json([{ name: "in an array" }]);
      case "/not-utf8.json":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
      case "/tricky.json":
        return json({
          name: "  Evil\u202Egnp.exe\u0000\n\tCat  ",
          image: "https://192.168.1.1/reboot.png",
        });
      case "/http-image.json":
        return json({ name: "plain http image", image: "http://example.com/1.png" });
      case "/proto.json":
        return json('{"__proto__": {"name": "polluted"}, "image_url": "https://img.example.com/2.png"}');
      case "/status-500.json":
        res.writeHead(500, { "content-type": "application/json" });
        return res.end('{"name":"error page"}');
      default:
        res.writeHead(404);
        return res.end();
    }
  });
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    asked,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
