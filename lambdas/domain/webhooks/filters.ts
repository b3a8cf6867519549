// Apart from schema.ts so that the matcher worker, which validates nothing, does not load zod.

const SEGMENT = '[A-Za-z0-9_-]+';
// Marked pure: esbuild keeps a top-level call in every bundle importing the module, used or not.
/** An exact event type (the same rule POST /events applies), `prefix.*`, or `*`: webhook filters, preference rules. */
export const EVENT_TYPE_PATTERN = /* @__PURE__ */ new RegExp(
  `^(?:\\*|${SEGMENT}(?:\\.${SEGMENT})*(?:\\.\\*)?)$`,
);

/**
 * The filter keys an event type is looked up under: itself, `prefix.*` for each proper prefix, and `*`.
 * `orders.*` matches `orders.created` and `orders.created.eu`, never `orders` itself.
 */
export const filterKeysFor = (eventType: string): string[] => {
  const segments = eventType.split('.');
  const keys = [eventType, '*'];
  for (let end = 1; end < segments.length; end += 1) keys.push(`${segments.slice(0, end).join('.')}.*`);
  return keys;
};

/** Whether a filter matches an event type (the same rule filterKeysFor implements by key lookups). */
export const filterMatches = (filter: string, eventType: string): boolean =>
  filter === '*' ||
  filter === eventType ||
  (filter.endsWith('.*') &&
    eventType.startsWith(filter.slice(0, -1)) &&
    eventType.length > filter.length - 1);
