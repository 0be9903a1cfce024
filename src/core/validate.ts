/**
 * Input validation with compiled TypeBox validators, reporting every violation at once as
 * "field, value, rule" sentences. Defaults declared in the schemas are applied to a valid value, after the check.
 */
import { type TSchema, TypeGuard } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import type { Violation } from "./errors.js";
import { stringifyJson } from "./json.js";

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The compiled checker of a schema, compiled once (ports are checked on every run). */
function checkerOf(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/**
 * Checks one port's value, then applies the schema's defaults to a copy of it. Checked first because TypeBox's
 * `Value.Default` merges a value of the wrong kind into the default (an object given where an array with a default
 * belongs becomes that array), which would hide the mistake. Defaults sit on optional fields only, so filling them
 * in never makes a valid value invalid.
 */
export function checkPort(
  portName: string,
  schema: TSchema,
  value: unknown,
): { value: unknown; violations: Violation[] } {
  const violations = validatePort(portName, schema, value);
  return { value: violations.length ? value : Value.Default(schema, structuredCloneJson(value)), violations };
}

/** A copy to default into: `Value.Default` writes into objects, and the caller's input stays as given. */
function structuredCloneJson(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  return structuredClone(value);
}

/** Checks one port's value; returns its violations with fields prefixed by the port name. */
function validatePort(portName: string, schema: TSchema, value: unknown): Violation[] {
  const check = checkerOf(schema);
  if (check.Check(value)) return [];
  const byField = new Map<string, Violation>();
  for (const error of check.Errors(value)) {
    const violation = describe(portName, error);
    // The first error on a field is the most specific one TypeBox reports; keep one per field.
    if (!byField.has(violation.field)) byField.set(violation.field, violation);
  }
  return [...byField.values()];
}

/** Turns a JSON pointer (`/Messages/3/To/0/Email`) into `Messages[3].To[0].Email`. */
function pointerToField(prefix: string, pointer: string): string {
  let field = prefix;
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(part)) field += `[${part}]`;
    else if (/^[A-Za-z_][\w]*$/.test(part)) field += field ? `.${part}` : part;
    else field += `[${JSON.stringify(part)}]`;
  }
  return field;
}

function describe(portName: string, error: ValueError): Violation {
  const schema = error.schema as TSchema & Record<string, unknown>;
  const field = pointerToField(portName, error.path);
  const secret = schema["x-secret"] === true;
  const missing =
    error.type === ValueErrorType.ObjectRequiredProperty ||
    (error.value === undefined && error.type !== ValueErrorType.ObjectAdditionalProperties);
  if (missing) {
    return { field, rule: "required", message: `${field} is required` };
  }
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    // TypeBox reports the unknown key itself: its path ends with the key, `schema` is the enclosing object.
    const allowed = Object.keys((schema.properties as object) ?? {});
    return {
      field,
      rule: `known fields: ${allowed.join(", ")}`,
      message: `${field} is not a known field (known fields: ${allowed.join(", ")})`,
    };
  }
  const rule = ruleOf(schema, error);
  const shown = secret ? "[secret]" : show(error.value);
  return {
    field,
    ...(secret ? {} : { value: error.value }),
    rule,
    message: `${field} = ${shown} is invalid: must be ${rule}`,
  };
}

function ruleOf(schema: TSchema & Record<string, unknown>, error: ValueError): string {
  if (typeof schema["x-rule"] === "string") return schema["x-rule"];
  const literals = literalChoices(schema);
  if (literals) return literals.length === 1 ? `${JSON.stringify(literals[0])}` : `one of: ${literals.join(", ")}`;
  if (TypeGuard.IsInteger(schema) || TypeGuard.IsNumber(schema)) {
    const kind = TypeGuard.IsInteger(schema) ? "an integer" : "a number";
    const bounds: string[] = [];
    if (typeof schema.minimum === "number") bounds.push(`>= ${schema.minimum}`);
    if (typeof schema.maximum === "number") bounds.push(`<= ${schema.maximum}`);
    return bounds.length ? `${kind} ${bounds.join(" and ")}` : kind;
  }
  if (TypeGuard.IsString(schema)) {
    if (typeof schema.minLength === "number" && schema.minLength > 0 && error.value === "") return "a non-empty string";
    if (typeof schema.pattern === "string") return `a string matching ${schema.pattern}`;
    return "a string";
  }
  if (TypeGuard.IsArray(schema)) {
    if (typeof schema.minItems === "number" && Array.isArray(error.value))
      return `an array of at least ${schema.minItems}`;
    return "an array";
  }
  if (TypeGuard.IsBoolean(schema)) return "a boolean";
  if (TypeGuard.IsObject(schema) || TypeGuard.IsRecord(schema)) return "an object";
  return error.message.replace(/^Expected /, "").toLowerCase();
}

function literalChoices(schema: TSchema): unknown[] | undefined {
  if (TypeGuard.IsLiteral(schema)) return [schema.const];
  if (TypeGuard.IsUnion(schema) && schema.anyOf.every((s) => TypeGuard.IsLiteral(s))) {
    return schema.anyOf.map((s) => (s as { const: unknown }).const);
  }
  return undefined;
}

function show(value: unknown): string {
  // stringifyJson: a wrong value may hold integers beyond 2^53 (bigints), which JSON.stringify cannot print.
  const text = stringifyJson(value);
  if (text === undefined) return String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
