/**
 * One watch per store at a time: the lease row names its holder and expires unless renewed. A holder on this
 * machine whose process is gone (killed, crashed) gives way at once; one elsewhere when its lease runs out.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { ChainmailError } from "../core/errors.js";
import type { LeaseHolder } from "./store.js";

export function newLeaseHolder(): LeaseHolder {
  return { id: randomUUID(), pid: process.pid, host: hostname() };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The error to refuse a new holder with, or undefined when the current lease may be taken over. */
export function leaseRefusal(
  current: { pid: number; host: string; expires_at: number },
  now: number,
  where: string,
): ChainmailError | undefined {
  const sameHost = current.host === hostname();
  if (current.expires_at <= now || (sameHost && !alive(current.pid))) return undefined;
  return new ChainmailError(
    "STORAGE_ERROR",
    `Another chainmail watch (pid ${current.pid} on ${current.host}) is running on ${where}.`,
    {
      hint: "Run one watch per store: stop the other one, or give this one another store.",
      details: { store: where, holder: { pid: current.pid, host: current.host } },
    },
  );
}
