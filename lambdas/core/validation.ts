import type * as core from 'zod/v4/core';
import { type FieldIssue, validationError } from './errors';

/**
 * A zod schema (zod/mini or full zod: both have a `safeParse` method). Only types come from zod here, so
 * the routes that validate nothing load no zod code.
 */
export type Schema = core.$ZodType & {
  safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: core.$ZodError };
};

/** `['recipient_ids', 3, 'x']` → `recipient_ids[3].x`, the field paths contract §3 shows. */
export const fieldPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((out, key) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    const name = String(key);
    return out ? `${out}.${name}` : name;
  }, '');

/** The value at `path` in `input`, or undefined where the path leads nowhere. */
const valueAt = (input: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    input,
  );

// zod 4 leaves the offending input out of its issues, so a missing field is told from a wrong type (or, for a
// field of a fixed set of values, from a wrong value) by looking the path up in the input itself.
const issuesOf = (error: core.$ZodError, input: unknown): FieldIssue[] =>
  error.issues.flatMap((issue): FieldIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: fieldPath([...issue.path, key]), issue: 'unknown field' }));
    }
    const field = fieldPath(issue.path) || '(body)';
    const missable = issue.code === 'invalid_type' || issue.code === 'invalid_value';
    if (missable && valueAt(input, issue.path) === undefined) {
      return [{ field, issue: 'required' }];
    }
    return [{ field, issue: issue.message }];
  });

/** Parses `input` with `schema`, or throws a `validation` ServiceError with one detail per offending field. */
export const parseOrThrow = <S extends Schema>(
  schema: S,
  input: unknown,
  what = 'request body',
): core.output<S> => {
  const result = schema.safeParse(input);
  if (result.success) return result.data as core.output<S>;
  throw validationError(`Invalid ${what}`, issuesOf(result.error, input));
};
