/**
 * `chainmail serve` with CHAINMAIL_WORKERS: several processes on one port, reported once (where it listens, its
 * metrics), a dead worker replaced, all stopped by one SIGTERM, and a worker that cannot start ending the service.
 */
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { IndexStore } from "../../src/sources/own-index/store.js";
import {
  childrenOf,
  killServeProcesses,
  listeningUrl,
  type ServeProcess,
  serveProcess,
  until,
} from "../support/serve-process.js";

const dir = mkdtempSync(join(tmpdir(), "chainmail-workers-"));
afterEach(killServeProcesses);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A GET on a connection of its own (no keep-alive), which a worker accepts. */
function fresh(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    }).on("error", reject);
  });
}

/** The value of one sample line of a Prometheus text answer. */
function sample(metrics: string, line: string): number | undefined {
  const found = metrics.split("\n").find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

const workersOf = (proc: ServeProcess) => childrenOf(proc.child.pid!);
/** Workers that have said they listen (one JSON log line each): the primary hands connections to those only. */
const listening = (proc: ServeProcess) => proc.out().split('"msg":"Server listening at').length - 1;

describe("chainmail serve with CHAINMAIL_WORKERS", () => {
  it("answers from that many processes on one port, says where once, and /metrics counts them all", async () => {
    // Handed round by the primary (by default each worker accepts for itself, as the kernel wakes it: not in turn).
    const proc = serveProcess(["--port", "0"], { CHAINMAIL_WORKERS: "3", NODE_CLUSTER_SCHED_POLICY: "rr" });
    const url = await listeningUrl(proc);
    expect(proc.err()).toContain(`listening on ${url} (API page: ${url}/docs), 3 workers`);
    await until(() => listening(proc) === 3, "three workers listening");
    expect(workersOf(proc)).toHaveLength(3);
    for (let i = 0; i < 30; i++) expect((await fresh(`${url}/nodes`)).status).toBe(200);

    const answeredBy = new Set(
      proc
        .out()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .filter((l) => l.req?.url === "/nodes")
        .map((l) => l.pid),
    );
    expect(answeredBy.size).toBeGreaterThan(1);
    for (const pid of answeredBy) expect(workersOf(proc)).toContain(pid);
    // Whichever worker answers /metrics, it reports the requests of all three.
    for (let i = 0; i < 3; i++) {
      const metrics = (await fresh(`${url}/metrics`)).body;
      expect(sample(metrics, 'chainmail_http_requests_total{route="/nodes",node="",status="200"}')).toBe(30);
    }
    expect(proc.err().match(/listening on/g)).toHaveLength(1);
  });

  it("reads the own index's figures once rather than adding them up over the workers", async () => {
    const db = join(dir, "index.sqlite");
    const store = await IndexStore.open(db);
    await store.setMeta("last_block", "1234");
    await store.close();
    const proc = serveProcess(["--port", "0"], { CHAINMAIL_WORKERS: "2", NFT_SOURCE: "index", INDEX_DB: db });
    const url = await listeningUrl(proc);
    await until(() => listening(proc) === 2, "two workers listening");
    const metrics = (await fresh(`${url}/metrics`)).body;
    expect(sample(metrics, "chainmail_index_last_block")).toBe(1234);
    expect(sample(metrics, "chainmail_index_up")).toBe(1);
  });

  it("starts another worker when one dies, and keeps answering", async () => {
    const proc = serveProcess(["--port", "0"], { CHAINMAIL_WORKERS: "2" });
    const url = await listeningUrl(proc);
    await until(() => listening(proc) === 2, "two workers listening");
    const [victim] = workersOf(proc);
    process.kill(victim!, "SIGKILL");
    await until(
      () => proc.err().includes(`a worker (pid ${victim}) exited with signal SIGKILL; starting another`),
      "the restart",
    );
    for (let i = 0; i < 4; i++) expect((await fresh(`${url}/healthz`)).status).toBe(200); // the other meanwhile
    await until(() => listening(proc) === 3, "a new worker listening");
    expect(workersOf(proc)).toHaveLength(2);
    expect(workersOf(proc)).not.toContain(victim);
    for (let i = 0; i < 4; i++) expect((await fresh(`${url}/healthz`)).status).toBe(200);
    expect(proc.child.exitCode).toBeNull();
  });

  it("stops every worker on SIGTERM, finishing their requests, and exits 0", async () => {
    const proc = serveProcess(["--port", "0"], { CHAINMAIL_WORKERS: "2" });
    await listeningUrl(proc);
    await until(() => listening(proc) === 2, "two workers listening");
    const workers = workersOf(proc);
    proc.child.kill("SIGTERM");
    const [code] = await once(proc.child, "exit");
    expect(code).toBe(0);
    expect(proc.err().match(/SIGTERM, finishing requests in flight/g)).toHaveLength(1);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  });

  it("ends with the exit code of a worker that cannot start, its reason said once", async () => {
    const proc = serveProcess(["--port", "0"], {
      CHAINMAIL_WORKERS: "4",
      NFTPORT_API_KEY: "3f2b8c1e-6a4d-4e8f-9b7a-1c2d3e4f5a6b",
    });
    const [code] = await once(proc.child, "exit");
    expect(code).toBe(2);
    expect(proc.err().match(/NFTPORT_API_KEY is set/g)).toHaveLength(1);
    expect(proc.err()).not.toContain("listening on");
  });

  it("names a bad CHAINMAIL_WORKERS before starting any", async () => {
    const proc = serveProcess(["--port", "0"], { CHAINMAIL_WORKERS: "0" });
    const [code] = await once(proc.child, "exit");
    expect(code).toBe(2);
    expect(proc.err()).toContain('Setting CHAINMAIL_WORKERS="0" is invalid: must be an integer from 1 to 1024');
  });
});
