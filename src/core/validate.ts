/**
 * Input validation with compiled TypeBox validators, reporting every violation at once as
 * "field, value, rule" sentences. Before any schema sees a value, `readJsonData` copies it as plain JSON data:
 * own properties only, bounded depth, no cycles, functions or symbols. Defaults declared in the schemas are
 * applied to that copy, after the check.
 */
import { Kind, type TSchema, TypeGuard } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import type { Violation } from "./errors.js";
import { MAX_JSON_DEPTH, stringifyJson } from "./json.js";

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
 * Checks one port's value (a copy from `readJsonData`, which this may change), then applies the schema's defaults
 * to it. Checked first because TypeBox's `Value.Default` merges a value of the wrong kind into the default (an
 * object given where an array with a default belongs becomes that array), which would hide the mistake. Defaults
 * sit on optional fields only, so filling them in never makes a valid value invalid.
 */
export function checkPort(
  portName: string,
  schema: TSchema,
  value: unknown,
): { value: unknown; violations: Violation[] } {
  const violations = validatePort(portName, schema, value);
  return { value: violations.length ? value : defaulterOf(schema)(value), violations };
}

const defaulters = new WeakMap<TSchema, (value: unknown) => unknown>();

/** How to fill in a schema's defaults, worked out once per schema (ports are checked on every run). */
function defaulterOf(schema: TSchema): (value: unknown) => unknown {
  let fill = defaulters.get(schema);
  if (!fill) {
    fill = planDefaults(schema);
    defaulters.set(schema, fill);
  }
  return fill;
}

/**
 * A schema without defaults leaves the value as it is. An object schema whose defaults sit only on its own
 * properties, each a primitive or an array of them (`params.chain`, `query.type`): filling them in is setting each
 * one that is missing, which is what TypeBox's `Value.Default` does for it after walking the whole schema and value
 * (several microseconds a run). Any other shape goes through `Value.Default`.
 */
function planDefaults(schema: TSchema): (value: unknown) => unknown {
  // Nothing to fill in: Value.Default would still walk the whole value (10,000 email messages: about 50 ms).
  if (!holdsDefault(schema)) return (value) => value;
  const general = (value: unknown) => Value.Default(schema, value);
  if (schema[Kind] !== "Object" || Object.hasOwn(schema, "default") || holdsDefault(schema.additionalProperties))
    return general;
  const fills: [string, unknown][] = [];
  for (const [key, property] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const { default: fallback, ...rest } = property;
    if (holdsDefault(rest)) return general;
    if (!Object.hasOwn(property, "default")) continue;
    // TypeBox calls a function default and merges a given object into an object default: those go its way.
    const primitive = (v: unknown) => v === null || (typeof v !== "object" && typeof v !== "function");
    const list = Array.isArray(fallback) && property[Kind] === "Array" && fallback.every(primitive);
    if (!primitive(fallback) && !list) return general;
    fills.push([key, fallback]);
  }
  return (value) => {
    if (typeof value !== "object" || value === null) return value;
    const record = value as Record<string, unknown>;
    // A fresh array each time: the caller may change the value it gets.
    for (const [key, fallback] of fills)
      if (record[key] === undefined) record[key] = Array.isArray(fallback) ? [...fallback] : fallback;
    return value;
  };
}

/** Whether a schema, or anything inside it, declares a `default`. */
function holdsDefault(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  return Object.hasOwn(schema, "default") || Object.values(schema).some(holdsDefault);
}

/** Violations one value may collect before the copy stops looking (a huge array of functions is one mistake). */
const MAX_DATA_PROBLEMS = 10;

const JSON_DATA = "JSON data: null, a boolean, a finite number, a string, an array or a plain object";

/**
 * A copy of `value` holding only plain JSON data, read the way untrusted input must be: own enumerable string
 * keys only (inherited properties never count; a `__proto__` key stays an ordinary key), at most MAX_JSON_DEPTH
 * levels of arrays and objects (`depth` is the level `value` sits at), and nothing JSON cannot hold: functions,
 * symbols, non-finite numbers, class instances (Date, Map, …), circular references, strings with a lone surrogate. Integers beyond 2^53 may be
 * bigints; null-prototype objects count as plain objects; a property whose value is `undefined` is left out, as
 * JSON does. One pass, which is also the copy that defaults are written into. Each problem is a violation naming
 * its field; a getter or proxy that throws is one too, never an exception.
 */
export function readJsonData(
  value: unknown,
  field: string,
  depth = 1,
): { value: unknown; violations?: undefined } | { violations: Violation[] } {
  const reader = new DataReader(field);
  try {
    const out = reader.copy(value, depth);
    return reader.violations.length ? { violations: reader.violations } : { value: out };
  } catch (err) {
    // A getter or a proxy trap of the caller's object threw while being read.
    return { violations: [...reader.violations, unreadable(fieldOf(field, reader.path), err)] };
  }
}

/** One pass of `readJsonData`: where it is (`path`, the objects above), and what it found wrong so far. */
class DataReader {
  readonly violations: Violation[] = [];
  readonly path: (string | number)[] = [];
  readonly #ancestors: object[] = [];

  constructor(readonly field: string) {}

  problem(rule: string, says: string, where: readonly (string | number)[] = this.path): void {
    const at = fieldOf(this.field, where);
    this.violations.push({ field: at, rule, message: `${at} ${says}` });
  }

  copy(item: unknown, level: number): unknown {
    if (this.violations.length >= MAX_DATA_PROBLEMS) return undefined;
    switch (typeof item) {
      case "string":
        // A lone surrogate (JSON text may hold one as `\ud800`) has no UTF-8 form: it cannot go into a URL or a message.
        if (!isWellFormed(item))
          this.problem(JSON_DATA, "holds a lone surrogate (\\ud800-\\udfff): it is not well-formed Unicode");
        return item;
      case "boolean":
      case "bigint":
        return item;
      case "number":
        if (!Number.isFinite(item)) this.problem(JSON_DATA, `= ${item} is invalid: must be a finite number`);
        return item;
      case "object":
        return item === null ? item : this.copyObject(item, level);
      case "undefined":
        this.problem(JSON_DATA, "is undefined, which JSON cannot hold");
        return item;
      default:
        this.problem(JSON_DATA, `is a ${typeof item}, which JSON cannot hold`);
        return undefined;
    }
  }

  copyObject(object: object, level: number): unknown {
    if (level > MAX_JSON_DEPTH) {
      // Only a value that contains itself nests this deep and repeats on its path: name where it first closes.
      const ancestors = this.#ancestors;
      const closes = ancestors.findIndex((ancestor, i) => ancestors.indexOf(ancestor) < i);
      if (closes !== -1)
        this.problem("no circular references", "refers back to a value that contains it", this.path.slice(0, closes));
      else
        this.problem(
          `at most ${MAX_JSON_DEPTH} levels`,
          `is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`,
        );
      return undefined;
    }
    this.#ancestors.push(object);
    const out = Array.isArray(object) ? this.copyArray(object, level) : this.copyRecord(object, level);
    this.#ancestors.pop();
    return out;
  }

  copyArray(array: unknown[], level: number): unknown[] {
    const list = new Array(array.length);
    for (let i = 0; i < array.length; i++) {
      this.path.push(i);
      list[i] = this.copy(array[i], level + 1);
      this.path.pop();
    }
    return list;
  }

  copyRecord(object: object, level: number): Record<string, unknown> | undefined {
    const proto = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      // A class instance (Date, Map, …), or an object inheriting from another: its inherited data is not read.
      const kind = (proto as { constructor?: { name?: unknown } }).constructor?.name;
      const what =
        typeof kind === "string" && kind && kind !== "Object"
          ? `is a ${kind}, which JSON cannot hold`
          : "inherits from another object: only a plain object's own properties are data";
      this.problem(JSON_DATA, what);
      return undefined;
    }
    const record: Record<string, unknown> = {};
    // for…in with an own-key check: the same keys in the same order as Object.keys, without an array of them
    // per object (a batch of 10,000 messages has some 40,000 objects).
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue;
      this.path.push(key);
      const entry = (object as Record<string, unknown>)[key];
      const copied = entry === undefined ? undefined : this.copy(entry, level + 1);
      this.path.pop();
      if (entry === undefined) continue;
      // Assigning `__proto__` would replace the copy's prototype instead of adding a key.
      if (key === "__proto__")
        Object.defineProperty(record, key, { value: copied, enumerable: true, writable: true, configurable: true });
      else record[key] = copied;
    }
    return record;
  }
}

/** `String.prototype.isWellFormed` (Node 20; not yet in TypeScript's ES2023 library). */
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** The violation of a value whose getter or proxy threw while chainmail read it. */
export function unreadable(field: string, err: unknown): Violation {
  const reason = err instanceof Error ? err.message : typeof err === "string" ? err : "it threw";
  return { field, rule: JSON_DATA, message: `${field} could not be read: ${reason}` };
}

/** Checks one port's value; returns its violations with fields prefixed by the port name. */
function validatePort(portName: string, schema: TSchema, value: unknown): Violation[] {
  const check = checkerOf(schema);
  if (check.Check(value)) return [];
  // A port that holds credentials (`params`) never echoes what it was given, wherever in it the mistake is: a key
  // given as the port itself, inside an array, under a misspelt name.
  const holdsSecrets = schema["x-secret"] === true;
  const byField = new Map<string, Violation>();
  for (const error of check.Errors(value)) {
    const violation = describe(portName, error, holdsSecrets);
    // The first error on a field is the most specific one TypeBox reports; keep one per field.
    if (!byField.has(violation.field)) byField.set(violation.field, violation);
  }
  return [...byField.values()];
}

/** Turns a JSON pointer (`/Messages/3/To/0/Email`) into `Messages[3].To[0].Email`. */
function pointerToField(prefix: string, pointer: string): string {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"));
  return fieldOf(prefix, parts);
}

/** A path of keys as a field name: `request`, ["Messages", 3, "To"] → `request.Messages[3].To`. */
function fieldOf(prefix: string, path: readonly (string | number)[]): string {
  let field = prefix;
  for (const part of path) {
    if (typeof part === "number" || /^\d+$/.test(part)) field += `[${part}]`;
    else if (/^[A-Za-z_][\w]*$/.test(part)) field += field ? `.${part}` : part;
    else field += `[${JSON.stringify(part)}]`;
  }
  return field;
}

/**
 * Whether a field's name says it holds a credential (`api_key`, `apiKey`, `password`, `Authorization`, `user id`,
 * `access_token`, …; not `token_id`): its value is never shown. Each name of the path is judged by its letters.
 */
export function mayBeSecret(field: string): boolean {
  return field
    .split(/[.[\]"]+/)
    .map((name) => name.toLowerCase().replace(/[^a-z]/g, ""))
    .some(
      (name) =>
        /apikey|secret|passw|passphrase|credential|authoriz|bearer/.test(name) ||
        /^(key|keys|token|tokens|pwd|pass|auth|user|userid)$/.test(name) ||
        /(key|token)s?$/.test(name),
    );
}

/** What a value is, without what it holds: "a string", "an array", … */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return typeof value === "number" || typeof value === "bigint" ? "a number" : `a ${typeof value}`;
}

function describe(portName: string, error: ValueError, holdsSecrets = false): Violation {
  const schema = error.schema as TSchema & Record<string, unknown>;
  const field = pointerToField(portName, error.path);
  const secret = holdsSecrets || schema["x-secret"] === true || mayBeSecret(field);
  const missing =
    error.type === ValueErrorType.ObjectRequiredProperty ||
    (error.value === undefined && error.type !== ValueErrorType.ObjectAdditionalProperties);
  if (missing) {
    // A credential's schema says what a caller without one can do instead (`x-missing`): the settings that stand in.
    const instead = typeof schema["x-missing"] === "string" ? `: ${schema["x-missing"]}` : "";
    return { field, rule: "required", message: `${field} is required${instead}` };
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
  // A rule that names an item (each item at most once) would show part of the value.
  const rule =
    secret && error.type === ValueErrorType.ArrayUniqueItems ? "each item at most once" : ruleOf(schema, error);
  // Where it was and what was expected, never what it was.
  const shown = secret ? `[${kindOf(error.value)}, not shown: it may be a secret]` : show(error.value);
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
    if (!Array.isArray(error.value)) return "an array";
    if (error.type === ValueErrorType.ArrayUniqueItems) {
      const seen = new Set<string>();
      const repeated = error.value.map((item) => stringifyJson(item)).find((item) => seen.size === seen.add(item).size);
      return `each item at most once (${repeated} is given more than once)`;
    }
    if (typeof schema.maxItems === "number" && error.value.length > schema.maxItems)
      return `an array of at most ${schema.maxItems}`;
    if (typeof schema.minItems === "number") return `an array of at least ${schema.minItems}`;
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
  // A URL's password (a database URL given in the wrong place) is not shown either.
  const masked = text.replace(/(\/\/[^/:@\s"]*):[^@\s"]*@/g, "$1:***@");
  return masked.length > 80 ? `${masked.slice(0, 77)}...` : masked;
}
