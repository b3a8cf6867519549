import * as z from './zod';

/**
 * Deepest nesting of free-form JSON a client may send (`data` of notifications and events, broadcast
 * payloads). DynamoDB refuses documents nested over 32 levels and the stored item wraps `data` in a few
 * levels of its own; deep values also overflow recursive code (JSON.stringify, marshalling) long before
 * the 256 KiB body limit. 16 levels is far more than any notification needs.
 */
export const MAX_JSON_DEPTH = 16;

/**
 * Nesting depth of a parsed JSON value: a scalar is 0, `{}` and `[]` are 1, `{"a": [1]}` is 2.
 * Iterative, so any depth is safe to measure; stops looking once `stopAbove` is passed.
 */
export const jsonDepth = (value: unknown, stopAbove = Number.POSITIVE_INFINITY): number => {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > stopAbove) return deepest;
    for (const child of Object.values(item)) pending.push([child, level]);
  }
  return deepest;
};

/** DynamoDB's smallest number magnitude (and 38 significant digits, more than a double has). */
const MIN_STORED_MAGNITUDE = 1e-130;

/** Why DynamoDB (through the SDK's marshalling) cannot store `value` as sent, or undefined when it can. */
const unstorableNumber = (value: number): string | undefined => {
  // JSON.parse turns a literal beyond the double range (1e400, -1e309) into ±Infinity, which JSON.stringify then
  // writes as null and the SDK refuses: the value would change or fail after acceptance.
  if (!Number.isFinite(value))
    return 'numbers must be within ±9007199254740991 (this one is beyond the range of a double: send it as a string)';
  // A double beyond 2^53 is an integer that JSON parsing may already have rounded (9007199254740993), and the SDK
  // refuses it; non-integers are all smaller, but may be below DynamoDB's smallest magnitude.
  if (Number.isInteger(value)) {
    return Number.isSafeInteger(value)
      ? undefined
      : 'integers must be within ±9007199254740991 (send larger ones as strings)';
  }
  return Math.abs(value) < MIN_STORED_MAGNITUDE
    ? 'numbers other than 0 must be at least 1e-130 in magnitude'
    : undefined;
};

/** The first place in a JSON value that cannot be stored as sent: its path (from the value) and why. */
export const unstorableJson = (value: unknown): { path: (string | number)[]; issue: string } | undefined => {
  const pending: [unknown, (string | number)[]][] = [[value, []]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'number') {
      const issue = unstorableNumber(item);
      if (issue) return { path, issue };
    } else if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index--) pending.push([item[index], [...path, index]]);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      if (entries.some(([key]) => key === '')) return { path, issue: 'keys must not be empty' };
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, child] = entries[index] as [string, unknown];
        pending.push([child, [...path, key]]);
      }
    }
  }
  return undefined;
};

/**
 * Checks of a free-form JSON object field: depth first (and aborting, so nothing recursive ever sees a deep
 * value), then its serialized size, then that DynamoDB can store it as sent (numbers, empty keys: stored values
 * are notifications, buffered frames and webhook deliveries, and a refusal there was a 500 or a lost delivery).
 * The limits are also written into the schema's metadata for the API docs.
 */
export const jsonLimits = <T extends object>(maxBytes: number) => [
  z.refine<T>((value) => jsonDepth(value, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH, {
    message: `must be nested at most ${MAX_JSON_DEPTH} levels deep`,
    abort: true,
  }),
  z.refine<T>((value) => Buffer.byteLength(JSON.stringify(value)) <= maxBytes, {
    message: `must serialize to at most ${maxBytes} bytes`,
  }),
  z.superRefine<T>((value, context) => {
    const unstorable = unstorableJson(value);
    if (unstorable) context.addIssue({ code: 'custom', message: unstorable.issue, path: unstorable.path });
  }),
  z.meta<T>({
    description: `Free-form JSON object: at most ${maxBytes} bytes serialized, nested at most ${MAX_JSON_DEPTH} levels deep; numbers finite, integers within ±9007199254740991, other numbers at least 1e-130 in magnitude, no empty keys.`,
    'x-max-bytes': maxBytes,
    'x-max-depth': MAX_JSON_DEPTH,
  }),
];
