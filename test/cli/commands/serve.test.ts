/** `chainmail serve` as a process: prints where it listens, serves, stops cleanly on SIGTERM; refuses unsafe settings. */
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { killServeProcesses, listeningUrl, serveProcess as serve } from "../../support/serve-process.js";
import { call } from "../../support/server-helpers.js";

afterEach(killServeProcesses);

describe("chainmail serve", () => {
  it("listens where told, logs JSON lines, stops on SIGTERM with exit 0", async () => {
    const proc = serve(["--port", "0", "--host", "127.0.0.1"]);
    const url = await listeningUrl(proc);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await call(`${url}/healthz`, "GET");
    expect(health.body).toEqual({ status: "ok" });
    proc.child.kill("SIGTERM");
    const [code] = await once(proc.child, "exit");
    expect(code).toBe(0);
    const lines = proc
      .out()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.some((l) => l.req?.url === "/healthz" && typeof l.reqId === "string")).toBe(true);
  });

  it("refuses to start when default credentials are set without CHAINMAIL_TOKENS", async () => {
    const proc = serve(["--port", "0"], { NFTPORT_API_KEY: "3f2b8c1e-6a4d-4e8f-9b7a-1c2d3e4f5a6b" });
    const [code] = await once(proc.child, "exit");
    expect(code).toBe(2);
    expect(proc.err()).toContain("NFTPORT_API_KEY is set");
    expect(proc.err()).toContain("CHAINMAIL_TOKENS");
    expect(proc.err()).not.toContain("3f2b8c1e-6a4d-4e8f-9b7a-1c2d3e4f5a6b");
  });

  it("rejects a bad --port as a usage error", async () => {
    const proc = serve(["--port", "http"]);
    const [code] = await once(proc.child, "exit");
    expect(code).toBe(2);
    expect(proc.err()).toContain("--port http is invalid");
  });
});
