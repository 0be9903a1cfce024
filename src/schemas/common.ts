import {
  Kind,
  type ObjectOptions,
  type Static,
  type TObject,
  type TProperties,
  type TSchema,
  Type,
  TypeRegistry,
} from "@sinclair/typebox";

/** The type of an OpenObject: its listed fields, and any other. */
export type OpenStatic<T extends TProperties> = Static<TObject<T>> & { [field: string]: unknown };

/**
 * An object that admits fields beyond those listed (`additionalProperties: true`), e.g. what Mailjet knows and
 * chainmail forwards unread: a caller's extra field compiles, where a closed object's misspelt one does not. The
 * schema is TypeBox's object schema (validated as one); only its static type gains the index signature.
 */
export const OpenObject = <T extends TProperties>(properties: T, options: ObjectOptions = {}) =>
  Type.Unsafe<OpenStatic<T>>(Type.Object(properties, { ...options, additionalProperties: true }));

/**
 * An exact integer: a JSON integer on the wire; in the library a `number`, or a `bigint` beyond 2^53.
 * (JSON Schema cannot say "bigint"; `core/json.ts` does the conversion.)
 */
export const ExactInteger = (options: { description?: string } = {}) =>
  Type.Unsafe<number | bigint>({ type: "integer", ...options });

const UINT64_MAX = 2n ** 64n - 1n;

// A uint64 is a number or, beyond 2^53, a bigint (what `parseJson` makes of a long integer); JSON Schema's
// `integer` cannot say that, so the check is a kind of its own. 2 ** 64 is exact as a double, so `<` is exact.
TypeRegistry.Set<unknown>("Uint64", (_schema, value) =>
  typeof value === "bigint"
    ? value >= 0n && value <= UINT64_MAX
    : typeof value === "number" && Number.isInteger(value) && value >= 0 && value < 2 ** 64,
);

/**
 * An unsigned 64-bit integer (a block number): 0 to 18446744073709551615, a `number`, or a `bigint` beyond 2^53.
 * The JSON Schema form is `{"type": "integer", "minimum": 0, "format": "uint64"}`.
 */
export const Uint64 = (description: string) =>
  Type.Unsafe<number | bigint>({
    [Kind]: "Uint64",
    type: "integer",
    minimum: 0,
    format: "uint64",
    description,
    "x-rule": `an integer from 0 to ${UINT64_MAX} (uint64)`,
  });

/**
 * Whether a schema is one of the integers above (ExactInteger, Uint64): those a bigint can hold, which the OpenAPI
 * document describes with their digit-string form.
 */
export function isExactIntegerSchema(schema: TSchema): boolean {
  return schema[Kind] === "Uint64" || (schema[Kind] === "Unsafe" && schema.type === "integer");
}

/** Port `response`, all operations: the raw upstream answer. */
export const RawResponse = Type.Object(
  {
    status: Type.Number({ description: "HTTP status of the upstream answer" }),
    headers: Type.Record(Type.String(), Type.Any(), { description: "Response headers, names in lower case" }),
    body: Type.String({ description: "Response body as text, exactly as received" }),
  },
  { $id: "RawResponse", title: "Raw response" },
);
export type RawResponse = Static<typeof RawResponse>;

/** Port `error`: a message a person can act on and details a program can act on. */
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

/** Only `ethereum` is supported. */
export const Chain = Type.Literal("ethereum", { default: "ethereum", description: "Only `ethereum` is supported" });

/**
 * What an HTTP header value can carry (RFC 9110 field-value; what undici accepts): visible Latin-1 characters,
 * with spaces and tabs only inside. No line breaks or other control characters, nothing beyond U+00FF.
 */
export const HEADER_VALUE_PATTERN =
  "^[\\x21-\\x7E\\x80-\\xFF](?:[\\t\\x20-\\x7E\\x80-\\xFF]*[\\x21-\\x7E\\x80-\\xFF])?$";

/** No line breaks or other control characters (C0 and DEL): what a credential may hold. */
export const NO_CONTROL_PATTERN = "^[^\\x00-\\x1F\\x7F]*$";

export const Address = (description: string) =>
  Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description, "x-rule": "an address: 0x followed by 40 hex digits" });

/** A schema's JSON Schema form (TypeBox schemas are JSON Schema already; this drops TypeBox's symbols). */
export function toJsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema));
}
