/**
 * The path of the first `__proto__` key in a parsed JSON value, or undefined. `JSON.parse` keeps such a key as
 * an own property, but copying the object (a schema's output, a spread) turns it into the prototype: the field
 * would vanish without a word. Iterative, so any depth is safe.
 */
export const protoKeyPath = (value: unknown): (string | number)[] | undefined => {
  const pending: [unknown, (string | number)[]][] = [[value, []]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (item === null || typeof item !== 'object') continue;
    if (!Array.isArray(item) && Object.hasOwn(item, '__proto__')) return [...path, '__proto__'];
    for (const [key, child] of Object.entries(item))
      pending.push([child, [...path, Array.isArray(item) ? Number(key) : key]]);
  }
  return undefined;
};
