/**
 * The node contract. A node is one plain object: id, version group, input and output port schemas, and `run`.
 * `runNode` validates every input port (all violations at once), calls `run`, and routes the outcome to the
 * node's output ports. It never throws for bad input or an upstream failure: those reach `error`.
 */
import type { Static, TProperties, TSchema } from "@sinclair/typebox";
import { type Config, defaultConfig } from "./config.js";
import type { ErrorPayload, Violation } from "./errors.js";
import { invalidInput, toErrorPayload } from "./errors.js";
import { type AttemptEvent, scrub } from "./http.js";
import { checkPort, readJsonData, unreadable } from "./validate.js";

/** Minimal structured logger (pino-compatible). Secrets are never passed to it. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What a node's run gets besides its inputs. */
export interface RunContext {
  config: Config;
  signal?: AbortSignal | undefined;
  logger?: Logger | undefined;
  /** Called after every upstream HTTP attempt (metrics, progress). */
  onUpstreamAttempt?: ((event: AttemptEvent & { node: string }) => void) | undefined;
  /**
   * What a source keeps across the pages of one walk (the cursors it has seen, the records it has handed out),
   * keyed by source and query: created by the paging (`pages`, `records`, `--all`), absent for a single call.
   */
  walk?: WalkMemory | undefined;
  /**
   * Where `email-send` looks up suppressed recipients when the process keeps no mail store (CHAINMAIL_MAIL_DB): a
   * workflow host passes a chainmail service's list (mail/service.ts).
   */
  suppressions?: SuppressionLookup | undefined;
}

/** A suppression list asked about some recipients of one sender: those on it, by lower-case address. */
export interface SuppressionLookup {
  suppressed(
    sender: string,
    emails: readonly string[],
  ): Promise<ReadonlyMap<string, { sender: string; reason: string; since: string }>>;
}

/** A walk's memory (RunContext.walk): one entry per source and query, holding what that source keeps. */
export type WalkMemory = Map<string, unknown>;

export type PortValues<P extends TProperties> = { [K in keyof P]: Static<P[K]> };
/** The output object: keyed by the ports that fired. */
export type NodeOutput<P extends TProperties> = Partial<PortValues<P>>;

/**
 * A node: its id, its ports (TypeBox schemas) and its run. `F` names the ports the operator can fill
 * (`filledByOperator`), `Id` the id as a literal type, so that `runNode` types a node's input and output from them.
 */
export interface NodeDefinition<
  I extends TProperties = TProperties,
  O extends TProperties = TProperties,
  F extends keyof I & string = keyof I & string,
  Id extends string = string,
> {
  /** Stable id, e.g. `nft-transactions-by-token`. */
  id: Id;
  /** Version group: `v0` for the retrievers, `v3.1` for the email sender. */
  version: string;
  title: string;
  description: string;
  inputs: I;
  outputs: O;
  /** The output port that means success (`data` or `messages sent`). */
  successPort: keyof O & string;
  /**
   * Input ports the operator's configuration can fill (credentials such as NFTPORT_API_KEY): a caller may leave them
   * out, or leave out their required fields. `prepare` fills them; the types of `runNode`'s input and the OpenAPI
   * document's `required` lists follow this list.
   */
  filledByOperator?: readonly F[];
  /** Fills inputs from configuration before validation (operator-provided credentials). */
  prepare?: (input: Record<string, unknown>, ctx: RunContext) => Record<string, unknown>;
  /**
   * Rules across fields that a schema cannot say (e.g. from_block <= to_block); `ctx` for rules that depend on
   * the configuration (e.g. the mail transport's own limits).
   */
  check?: (input: PortValues<I>, ctx: RunContext) => Violation[];
  run(input: PortValues<I>, ctx: RunContext): Promise<NodeOutput<O>>;
}

/** Identity function that types a node definition, keeping its id and its operator-filled ports as literal types. */
export function defineNode<
  I extends TProperties,
  O extends TProperties,
  F extends keyof I & string = never,
  const Id extends string = string,
>(node: NodeDefinition<I, O, F, Id>): NodeDefinition<I, O, F, Id> {
  return node;
}

export type AnyNode = NodeDefinition<any, any, any, any>;

/** Whether `T` is `any` (the ports of an `AnyNode`, whose input is then not typed). */
type IsAny<T> = 0 extends 1 & T ? true : false;

/** A value as a caller may write it: arrays may be readonly (`as const`); everything else as the schema says. */
export type Given<T> = T extends bigint | boolean | number | string | null | undefined
  ? T
  : T extends readonly (infer U)[]
    ? readonly Given<U>[]
    : T extends object
      ? { [K in keyof T]: Given<T[K]> }
      : T;

/** A credentials port the operator can fill: every field may be left out. */
type Fillable<T> = { [K in keyof T]?: Given<T[K]> | undefined };

/** The empty object type: a port whose schema accepts it may be left out. */
type Empty = Record<never, never>;

/** Flattens an intersection of object types, for readable hovers and messages. */
type Flat<T> = { [K in keyof T]: T[K] } & Empty;

/**
 * The input object a caller gives a node, keyed by input port: each port typed from its schema. A port is optional
 * when its schema accepts `{}` (every field optional; a missing port is read as `{}`) or when the operator can
 * fill it (`filledByOperator`: credentials). Fields with a default are optional. Unknown fields do not compile.
 */
export type NodeInput<I extends TProperties, F extends string = never> =
  IsAny<I> extends true
    ? unknown
    : Flat<
        {
          [K in keyof I as K extends F ? never : Empty extends Static<I[K]> ? never : K]: Given<Static<I[K]>>;
        } & {
          [K in keyof I as K extends F ? K : Empty extends Static<I[K]> ? K : never]?:
            | (K extends F ? Fillable<Static<I[K]>> : Given<Static<I[K]>>)
            | undefined;
        }
      >;

/** What `runNode` resolves to for a node with output ports `O`: the ports that fired, `error` typed as the payload. */
export type NodeResult<O extends TProperties> = NodeOutput<O> & { error?: ErrorPayload };

/** The input object of a node (`InputOfNode<typeof nftTransactionsByToken>`). */
export type InputOfNode<N> = N extends NodeDefinition<infer I, any, infer F, any> ? NodeInput<I, F> : never;

/** The output object of a node (`OutputOfNode<typeof nftTransactionsByToken>`). */
export type OutputOfNode<N> = N extends NodeDefinition<any, infer O, any, any> ? NodeResult<O> : never;

/** Output of a node whose error port has the `{ error, details }` shape. */
export interface GenericOutput {
  [port: string]: unknown;
  error?: ErrorPayload;
}

/**
 * Runs a node on one input object (keyed by input port). Always resolves; failures are on `error`.
 * Without a context, the process environment's configuration is used.
 */
export function runNode<I extends TProperties, O extends TProperties>(
  node: NodeDefinition<I, O, any, any>,
  input: unknown,
  ctx: Partial<RunContext> = {},
): Promise<NodeResult<O>> {
  return runNodeWith(node, input, { ...ctx, config: ctx.config ?? defaultConfig() });
}

/**
 * `runNode` with the whole context given: what a workflow host calls with the config it built (its own settings
 * and HTTP engine), so that nothing of this process's environment is read or bundled.
 */
export async function runNodeWith<I extends TProperties, O extends TProperties>(
  node: NodeDefinition<I, O, any, any>,
  input: unknown,
  context: RunContext,
): Promise<NodeResult<O>> {
  const secrets = configSecrets(context.config);
  let output: NodeOutput<O> & { error?: ErrorPayload };
  try {
    const prepared = prepareInput(node, input, context, secrets);
    if ("violations" in prepared) output = { error: invalidInput(prepared.violations) } as NodeOutput<O>;
    else output = await node.run(prepared.values, context);
  } catch (err) {
    output = { error: toErrorPayload(err) } as NodeOutput<O>;
  }
  // The last guard: no credential, the operator's or one the caller gave (wherever they put it), in an error.
  if (output.error) output.error = scrubPayload(output.error, secrets) as ErrorPayload;
  return output;
}

/** The credentials of the configuration: never in any output. */
function configSecrets(config: Config): string[] {
  const out = [
    config.nftport.apiKey,
    config.opensea.apiKey,
    config.service.token,
    config.mailjet.userId,
    config.mailjet.password,
  ];
  if (config.smtpUrl) {
    try {
      const url = new URL(config.smtpUrl);
      out.push(decodeURIComponent(url.password), url.password);
    } catch {
      // not a URL: the smtp transport says so, without it
    }
  }
  return out.filter((s): s is string => typeof s === "string" && s.length > 0);
}

/**
 * The strings of a value given to a port that holds credentials (at most 64): all of them, but for the fields its
 * schema knows as not secret (`params.chain`), so that a key is found however it was given (the port itself, in an
 * array, under a misspelt name) and a chain name is not taken for one.
 */
function secretsIn(value: unknown, schema: TSchema, out: string[]): void {
  if (out.length >= 64) return;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) secretsIn(item, schema, out);
  else if (value && typeof value === "object") {
    const known = (schema.properties ?? {}) as Record<string, TSchema>;
    for (const [key, item] of Object.entries(value)) {
      if (Object.hasOwn(known, key) && known[key]!["x-secret"] !== true) continue;
      secretsIn(item, schema, out);
    }
  }
}

/** An error payload with every secret replaced, in its sentence and anywhere in its details. */
function scrubPayload(value: unknown, secrets: readonly string[]): unknown {
  if (!secrets.length) return value;
  if (typeof value === "string") return scrub(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrubPayload(item, secrets));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubPayload(v, secrets)]));
  }
  return value;
}

/**
 * Validates an input object against a node's ports; returns the values with defaults, or every violation.
 * The input is read as untrusted: only its own keys name ports (`constructor` or `__proto__` is an unknown port,
 * not a built-in), and each port's value is first copied as plain JSON data (`readJsonData`), so nothing
 * inherited, circular or nested without bound reaches `prepare`, the schemas, `check` or `run`.
 */
function prepareInput<I extends TProperties>(
  node: NodeDefinition<I, any>,
  input: unknown,
  ctx: RunContext,
  secrets: string[],
): { values: PortValues<I> } | { violations: Violation[] } {
  const ports = Object.keys(node.inputs);
  if (!isObjectInput(input)) {
    return {
      violations: [
        {
          field: "(input)",
          rule: "an object keyed by input port",
          message: `The input must be an object keyed by input port (${ports.join(", ")})`,
        },
      ],
    };
  }
  const violations: Violation[] = [];
  const { given, broken } = readPorts(node, input, violations, secrets);
  const raw = node.prepare ? node.prepare(given, ctx) : given;
  const values: Record<string, unknown> = {};
  for (const [port, schema] of Object.entries(node.inputs) as [string, TSchema][]) {
    if (broken.has(port)) continue;
    const checked = checkPort(port, schema, Object.hasOwn(raw, port) ? (raw[port] ?? {}) : {});
    values[port] = checked.value;
    violations.push(...checked.violations);
  }
  // Cross-field rules run too, so every violation is reported at once; they guard their own types, but need every
  // port present (an unreadable one is left out of `values`).
  if (node.check && broken.size === 0) violations.push(...node.check(values as PortValues<I>, ctx));
  return violations.length ? { violations } : { values: values as PortValues<I> };
}

/**
 * The input's own ports, each value copied as plain JSON data; an unknown port or an unreadable value is a
 * violation, and a port whose value is unreadable is `broken` (left out of the checks that need it).
 */
function readPorts(
  node: Pick<NodeDefinition, "id" | "inputs">,
  input: object,
  violations: Violation[],
  secrets: string[],
): { given: Record<string, unknown>; broken: Set<string> } {
  const ports = Object.keys(node.inputs);
  const given: Record<string, unknown> = {};
  const broken = new Set<string>();
  for (const port of ownKeys(input, violations)) {
    if (!Object.hasOwn(node.inputs, port)) {
      violations.push({
        field: port,
        rule: `input ports: ${ports.join(", ")}`,
        message: `${port} is not an input port of ${node.id} (ports: ${ports.join(", ")})`,
      });
      continue;
    }
    let value: unknown;
    try {
      value = (input as Record<string, unknown>)[port];
    } catch (err) {
      violations.push(unreadable(port, err));
      broken.add(port);
      continue;
    }
    if (value === undefined) continue; // as JSON would leave it out
    const read = readJsonData(value, port, 2);
    if (read.violations) {
      violations.push(...read.violations);
      broken.add(port);
    } else {
      given[port] = read.value;
      // What the caller put into a port that holds credentials is secret, whatever shape they gave it.
      const schema = node.inputs[port] as TSchema;
      if (schema["x-secret"] === true) secretsIn(read.value, schema, secrets);
    }
  }
  return { given, broken };
}

/** An object keyed by port: a plain object (or a null-prototype one), not an array, a class instance or a primitive. */
function isObjectInput(input: unknown): input is object {
  try {
    if (input === null || typeof input !== "object" || Array.isArray(input)) return false;
    const proto = Object.getPrototypeOf(input);
    return proto === Object.prototype || proto === null;
  } catch {
    return false; // a revoked proxy
  }
}

/** The input's own enumerable keys; a proxy that throws is a violation, not an exception. */
function ownKeys(input: object, violations: Violation[]): string[] {
  try {
    return Object.keys(input);
  } catch (err) {
    violations.push(unreadable("(input)", err));
    return [];
  }
}

/** The JSON Schema form of a node: what `chainmail nodes` and `GET /nodes` print. */
export function describeNode(node: AnyNode) {
  const ports = (props: TProperties) =>
    Object.fromEntries(Object.entries(props).map(([name, schema]) => [name, JSON.parse(JSON.stringify(schema))]));
  return {
    id: node.id,
    version: node.version,
    title: node.title,
    description: node.description,
    inputs: ports(node.inputs),
    outputs: ports(node.outputs),
    successPort: node.successPort,
  };
}
