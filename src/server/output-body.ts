/**
 * A node's output as the body of the service's reply. It reads like `stringifyJson(output)`, but a port whose value
 * came unchanged from an upstream's JSON text (core/raw-json.ts: a retriever's page) is written as that text
 * instead of being serialised again: for a 50-record page, about half of what serialising the reply cost.
 */
import { stringifyJson } from "../core/json.js";
import { rawJsonOf } from "../core/raw-json.js";

export function stringifyOutput(output: Readonly<Record<string, unknown>>): string {
  const ports = Object.keys(output);
  const raw = ports.map((port) => {
    const value = output[port];
    return typeof value === "object" && value !== null ? rawJsonOf(value) : undefined;
  });
  if (raw.every((text) => text === undefined)) return stringifyJson(output);
  let body = "";
  ports.forEach((port, i) => {
    // As JSON.stringify does: a port without a JSON value is left out.
    const text: string | undefined = raw[i] ?? stringifyJson(output[port]);
    if (text === undefined) return;
    body += `${body ? "," : "{"}${JSON.stringify(port)}:${text}`;
  });
  return body ? `${body}}` : "{}";
}
