/** Helpers for the service tests: real sockets (undici), exact JSON, captured log lines. */
import { type Dispatcher, request } from "undici";
import { parseJson } from "../../src/core/json.js";

export interface Answer {
  status: number;
  headers: Dispatcher.ResponseData["headers"];
  text: string;
  body: any;
}

export async function call(
  url: string,
  method: "GET" | "POST",
  body?: string | object,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const text = typeof body === "string" || body === undefined ? body : JSON.stringify(body);
  const res = await request(url, {
    method,
    headers: text === undefined ? headers : { "content-type": "application/json", ...headers },
    body: text,
  });
  const answer = await res.body.text();
  let parsed: unknown;
  try {
    parsed = parseJson(answer);
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text: answer, body: parsed };
}

/** A pino destination that keeps every line, for assertions on what was logged. */
export function logCapture() {
  const lines: string[] = [];
  return {
    lines,
    stream: { write: (line: string) => void lines.push(line) },
    parsed: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
