// The one zod entry of function code: zod/mini (functional API, tree-shakes to tens of KiB where full zod is
// 444 KiB) with the project's messages. zod/mini sets no messages, so without this every issue would read
// "Invalid input"; ours speak as the ones written by hand do ("must be at most 256 characters"), so a client
// reads one voice, and need no locale file in the bundles.
// Import it as a namespace (`import * as z from '…/core/zod'`): re-exporting zod/mini's namespace as one
// object would defeat tree shaking.
import { config, ZodMiniISODateTime, ZodMiniNumber } from 'zod/mini';
import * as core from 'zod/v4/core';

/** What a size counts, by the kind of value checked. */
const UNITS: Readonly<Record<string, readonly [string, string]>> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
  map: ['entry', 'entries'],
  file: ['byte', 'bytes'],
};

const article = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);

const typeOf = (value: unknown): string => {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  return typeof value;
};

const shown = (value: unknown) => (typeof value === 'bigint' ? `${value}` : JSON.stringify(value));

/** `must be at least 2 characters`, `must be more than 0`, `must have at most 10 items`. */
const bound = (
  issue: { origin?: string; inclusive?: boolean; exact?: boolean },
  limit: number | bigint | Date,
  side: 'least' | 'most',
): string => {
  const units = UNITS[issue.origin ?? ''];
  const value = limit instanceof Date ? limit.toISOString() : String(limit);
  if (units) {
    const unit = Number(limit) === 1 ? units[0] : units[1];
    const verb = issue.origin === 'string' ? 'be' : 'have';
    return `must ${verb} ${issue.exact ? 'exactly' : `at ${side}`} ${value} ${unit}`;
  }
  if (issue.exact) return `must be exactly ${value}`;
  if (issue.inclusive === false) return `must be ${side === 'least' ? 'more' : 'less'} than ${value}`;
  return `must be at ${side} ${value}`;
};

const FORMATS: Readonly<Record<string, string>> = {
  datetime: 'an ISO 8601 date-time',
  date: 'an ISO 8601 date',
  url: 'a URL',
  email: 'an email address',
  uuid: 'a UUID',
};

/** One message per kind of issue, in the voice of the project's own ("must …", lower case, no type jargon). */
const message = (issue: core.$ZodRawIssue): string => {
  switch (issue.code) {
    case 'invalid_type': {
      const received = typeOf(issue.input);
      return `must be ${article(issue.expected)}${received === 'undefined' ? '' : `, not ${article(received)}`}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${shown(issue.values[0])}`
        : `must be one of ${issue.values.map(shown).join(', ')}`;
    case 'too_big':
      return bound(issue, issue.maximum, 'most');
    case 'too_small':
      return bound(issue, issue.minimum, 'least');
    case 'invalid_format':
      if (issue.format === 'regex' && issue.pattern) return `must match ${issue.pattern}`;
      if (issue.format === 'starts_with') return `must start with ${shown(issue.prefix)}`;
      if (issue.format === 'ends_with') return `must end with ${shown(issue.suffix)}`;
      if (issue.format === 'includes') return `must include ${shown(issue.includes)}`;
      return `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return 'unknown field';
    case 'invalid_key':
      return 'has a key that is not allowed';
    case 'invalid_element':
      return 'has a value that is not allowed';
    case 'invalid_union':
      return 'matches none of the allowed forms';
    default:
      return 'is not valid';
  }
};

config({ localeError: (issue) => message(issue) });

export * from 'zod/mini';

// zod/mini's `iso` and `coerce` are namespace objects: a bundle that uses one of their members carries all of
// them (ISO time and duration, coerced dates and bigints). These are the members in use, each on its own.

/** `iso.datetime`: an ISO 8601 date-time string. */
export const isoDateTime = (params?: string | core.$ZodISODateTimeParams) =>
  core._isoDateTime(ZodMiniISODateTime, params);

/** `coerce.number`: a number from any input `Number()` reads. */
export const coercedNumber = <T = unknown>(params?: string | core.$ZodNumberParams) =>
  core._coercedNumber(ZodMiniNumber, params) as ZodMiniNumber<T>;
