/**
 * How a node's answer writes integers beyond 2^53, as the caller asks with the query parameter `bigint`:
 * `number` (the default) writes them as bare JSON integers, every digit kept; `string` writes them as strings of
 * their decimal digits, for clients whose JSON parser would round them (a browser's or a generated client's
 * `JSON.parse`). Safe integers stay numbers either way: the same rule as the workflow packages follow.
 */
import { type ErrorPayload, invalidInput } from "../core/errors.js";
import { withExactStrings } from "../core/json.js";

/** The query parameter, its values and what each means: one source for the service and the OpenAPI document. */
export const BIGINT_PARAMETER = "bigint";
export const BIGINT_FORMS = ["number", "string"] as const;
export type BigintForm = (typeof BIGINT_FORMS)[number];

/** The form a request asks for, or the `invalid_input` payload naming the parameter. */
export function bigintForm(query: unknown): { form: BigintForm } | { error: ErrorPayload } {
  const given =
    typeof query === "object" && query !== null && Object.hasOwn(query, BIGINT_PARAMETER)
      ? (query as Record<string, unknown>)[BIGINT_PARAMETER]
      : undefined;
  if (given === undefined) return { form: "number" };
  if (typeof given === "string" && (BIGINT_FORMS as readonly string[]).includes(given)) {
    return { form: given as BigintForm };
  }
  // Fastify's parser gives a string, or an array of them for a repeated parameter.
  const shown =
    typeof given === "string"
      ? `= ${JSON.stringify(given.slice(0, 64))}`
      : Array.isArray(given)
        ? `given ${given.length} times`
        : `of type ${typeof given}`;
  return {
    error: invalidInput([
      {
        field: `?${BIGINT_PARAMETER}`,
        rule: `one of: ${BIGINT_FORMS.join(", ")}`,
        message: `The query parameter ${BIGINT_PARAMETER} ${shown} is invalid: must be given once, one of: ${BIGINT_FORMS.join(", ")}`,
      },
    ]),
  };
}

/** The answer body in the asked form. */
export const inForm = (body: unknown, form: BigintForm): unknown => (form === "string" ? withExactStrings(body) : body);
