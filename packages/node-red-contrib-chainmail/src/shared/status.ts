/** The statuses every chainmail node shows, in the words of its message catalogue (locales/<lang>/<file>.json). */
import type { NodeAPI, NodeStatus } from "../node-red.js";

/** A status text that names no secret: the short form of an error payload. */
export const errorStatus = (code: string): NodeStatus => ({ fill: "red", shape: "ring", text: code });

export const runningStatus = (RED: NodeAPI): NodeStatus => ({
  fill: "blue",
  shape: "dot",
  text: RED._("chainmail.status.running"),
});

/** A poll's status: how many new items, and when. */
export const polledStatus = (RED: NodeAPI, count: number): NodeStatus => ({
  fill: "green",
  shape: "dot",
  text: RED._("chainmail.status.polled", { n: count, time: new Date().toISOString().slice(11, 19) }),
});

/** The status of a successful run: records or messages. */
export function summary(RED: NodeAPI, output: Record<string, unknown>): string {
  const data = output.data as { transactions?: unknown[] } | undefined;
  if (data?.transactions) return RED._("chainmail.status.records", { n: data.transactions.length });
  const sent = output["messages sent"] as { Messages?: { Status?: string }[] } | undefined;
  if (sent?.Messages) {
    const failed = sent.Messages.filter((m) => m.Status !== "success").length;
    // "n", not "count": i18next would take a count for a plural form.
    return failed
      ? RED._("chainmail.status.sentFailed", { n: sent.Messages.length - failed, failed })
      : RED._("chainmail.status.sent", { n: sent.Messages.length });
  }
  return RED._("chainmail.status.done");
}
