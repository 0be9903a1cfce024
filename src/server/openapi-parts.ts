/** The pieces every path of the OpenAPI document is written with. */
import type { TSchema } from "@sinclair/typebox";
import { isExactIntegerSchema } from "../schemas/common.js";

export type Json = Record<string, unknown>;

/** What an exact integer of an answer is on the wire: a JSON integer, or a digit string when asked for. */
const DIGIT_STRING_NOTE =
  "A JSON integer, every digit kept (it can go beyond 2^53). With `?bigint=string` one beyond 2^53 is a string of its decimal digits instead, which any JSON parser keeps exact.";

/**
 * The JSON Schema form of a TypeBox schema for the document: every schema that carries an `$id` becomes a `$ref`
 * to `components.schemas`, collected there; in answers (`answer`), the integers that can go beyond 2^53
 * (ExactInteger, Uint64) also admit the digit string that `?bigint=string` writes.
 */
export function documentSchema(schema: unknown, components: Json, answer: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((item) => documentSchema(item, components, answer));
  if (schema === null || typeof schema !== "object") return schema;
  const { $id, ...rest } = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(rest)) out[key] = documentSchema(value, components, answer);
  if (answer && isExactIntegerSchema(schema as TSchema)) {
    out.type = ["integer", "string"];
    out.pattern = "^-?[0-9]+$";
    out.description = out.description ? `${out.description}. ${DIGIT_STRING_NOTE}` : DIGIT_STRING_NOTE;
  }
  if (typeof $id !== "string") return out;
  components[$id] ??= out;
  return { $ref: `#/components/schemas/${$id}` };
}

export const json = (schema: unknown, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** What the paths of one document share: its component schemas and the service's own refusals. */
export interface DocumentParts {
  schemas: Json;
  /** `{ error }`: the service's own refusal, in the shape of a node's error port. */
  errorOnly: Json;
  /** The answer to bytes that are not HTTP, or that did not arrive in time. */
  notHttp: Json;
  /** Whether the node routes require a bearer token. */
  auth: boolean;
}

/** The security of a route behind bearer tokens: without CHAINMAIL_TOKENS it is open too, a token then optional (and not checked). */
export const bearerSecurity = (auth: boolean) => (auth ? [{ bearer: [] }] : [{}, { bearer: [] }]);
