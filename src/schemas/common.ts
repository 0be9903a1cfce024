import { type Static, type TSchema, Type } from "@sinclair/typebox";

/**
 * An exact integer: a JSON integer on the wire; in the library a `number`, or a `bigint` beyond 2^53.
 * (JSON Schema cannot say "bigint"; `core/json.ts` does the conversion.)
 */
export const ExactInteger = (options: { description?: string } = {}) =>
  Type.Unsafe<number | bigint>({ type: "integer", ...options });

/** Port `response`, all operations: the raw upstream answer (SPEC.md, Raw response). */
export const RawResponse = Type.Object(
  {
    status: Type.Number({ description: "HTTP status of the upstream answer" }),
    headers: Type.Record(Type.String(), Type.Any(), { description: "Response headers, names in lower case" }),
    body: Type.String({ description: "Response body as text, exactly as received" }),
  },
  { $id: "RawResponse", title: "Raw response" },
);
export type RawResponse = Static<typeof RawResponse>;

/** Port `error`: a message a person can act on and details a program can act on (SPEC.md, Errors). */
export const ErrorPayloadSchema = Type.Object(
  {
    error: Type.String({ description: "What failed and what to do about it" }),
    details: Type.Object(
      {
        code: Type.String({ description: "Stable error code, see the README's error table" }),
      },
      { additionalProperties: true, description: "Machine-readable context: code, field violations, upstream status" },
    ),
  },
  { $id: "ErrorPayload", title: "Error" },
);

/** Only `ethereum` is supported (SPEC.md rule 1). */
export const Chain = Type.Literal("ethereum", { default: "ethereum", description: "Only `ethereum` is supported" });

export const Address = (description: string) =>
  Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description, "x-rule": "an address: 0x followed by 40 hex digits" });

/** A schema's JSON Schema form (TypeBox schemas are JSON Schema already; this drops TypeBox's symbols). */
export function toJsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema));
}
