/**
 * A JSON value with every object's keys in sorted order, at every depth: the same bytes from `JSON.stringify`
 * whatever order the keys came in (a request body, an item DynamoDB gave back).
 */
export const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
};
