/** What the nodes that poll share (activity, delivery events): their lists, their cursor file, their timer. */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeAPI, RuntimeNode } from "../node-red.js";

/** A comma- or space-separated field as a list; empty: not given. */
export const listOf = (text: string | undefined): string[] | undefined => {
  const items = (text ?? "").split(/[\s,]+/).filter(Boolean);
  return items.length ? items : undefined;
};

/** A cursor kept in a file of Node-RED's user folder, written after what it covers was sent. */
export function cursorFile<T>(RED: NodeAPI, folder: string, node: RuntimeNode) {
  const dir = join(RED.settings.userDir ?? ".", folder);
  const file = join(dir, `${node.id}.json`);
  return {
    read(): T | undefined {
      try {
        return JSON.parse(readFileSync(file, "utf8")) as T;
      } catch {
        return undefined;
      }
    },
    write(cursor: T) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(cursor));
      renameSync(`${file}.tmp`, file);
    },
    remove: () => rmSync(file, { force: true }),
  };
}

/**
 * Runs `poll` at once, then every `intervalMs` (at once again when it answers true) until the node closes. A node
 * deleted from the flow forgets its cursor (`onRemoved`); a restart or a redeploy keeps it.
 */
export function everyInterval(
  node: RuntimeNode,
  intervalMs: number,
  poll: () => Promise<boolean>,
  onRemoved: () => void,
) {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const run = async () => {
    const again = await poll();
    if (!closed) timer = setTimeout(run, again ? 0 : intervalMs);
  };
  timer = setTimeout(run, 0);
  node.on("close", (removed: boolean, done: () => void) => {
    closed = true;
    clearTimeout(timer);
    if (removed) onRemoved();
    done();
  });
}
