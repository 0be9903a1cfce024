/**
 * TypeBox's compiler as the n8n package builds it: the same `Compile(schema)` → `{ Check, Errors }`, checking by
 * TypeBox's interpreter instead of generated code. n8n refuses community packages that evaluate code (the
 * compiler builds each checker with `new Function`); the error list is the same either way (TypeBox's compiled
 * checker reports its errors through this same interpreter).
 */
import type { TSchema } from "@sinclair/typebox";
import { Errors } from "@sinclair/typebox/errors";
import { Check } from "@sinclair/typebox/value";

export type TypeCheck<T extends TSchema> = ReturnType<typeof compile<T>>;

function compile<T extends TSchema>(schema: T) {
  return {
    Check: (value: unknown): boolean => Check(schema, value),
    Errors: (value: unknown) => Errors(schema, value),
  };
}

export const TypeCompiler = { Compile: compile };
