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

/**
 * Checks of a free-form JSON object field: depth first (and aborting, so nothing recursive ever sees a deep
 * value), then its serialized size. The limits are also written into the schema's metadata for the API docs.
 */
export const jsonLimits = <T extends object>(maxBytes: number) => [
  z.refine<T>((value) => jsonDepth(value, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH, {
    message: `must be nested at most ${MAX_JSON_DEPTH} levels deep`,
    abort: true,
  }),
  z.refine<T>((value) => Buffer.byteLength(JSON.stringify(value)) <= maxBytes, {
    message: `must serialize to at most ${maxBytes} bytes`,
  }),
  z.meta<T>({
    description: `Free-form JSON object: at most ${maxBytes} bytes serialized, nested at most ${MAX_JSON_DEPTH} levels deep.`,
    'x-max-bytes': maxBytes,
    'x-max-depth': MAX_JSON_DEPTH,
  }),
];
