import type { z } from 'zod';
import { type FieldIssue, validationError } from './errors';

/** `['recipient_ids', 3, 'x']` → `recipient_ids[3].x`, the field paths contract §3 shows. */
export const fieldPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((out, key) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    const name = String(key);
    return out ? `${out}.${name}` : name;
  }, '');

const issuesOf = (error: z.ZodError): FieldIssue[] =>
  error.issues.flatMap((issue): FieldIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: fieldPath([...issue.path, key]), issue: 'unknown field' }));
    }
    const field = fieldPath(issue.path) || '(body)';
    if (issue.code === 'invalid_type' && issue.input === undefined) return [{ field, issue: 'required' }];
    return [{ field, issue: issue.message }];
  });

/** Parses `input` with `schema`, or throws a `validation` ServiceError with one detail per offending field. */
export const parseOrThrow = <S extends z.ZodType>(
  schema: S,
  input: unknown,
  what = 'request body',
): z.output<S> => {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationError(`Invalid ${what}`, issuesOf(result.error));
};
