/**
 * The path of the first `__proto__` key in a parsed JSON value, or undefined. `JSON.parse` keeps such a key as
 * an own property, but copying the object (a schema's output, a spread) turns it into the prototype: the field
 * would vanish without a word. Iterative and linear: a body can nest 100,000 levels before any depth check, so
 * each visited value links to its parent and the path is built only for the key found.
 */
export const protoKeyPath = (value: unknown): (string | number)[] | undefined => {
  interface Visit {
    readonly item: unknown;
    readonly parent: Visit | undefined;
    readonly key: string | number | undefined;
  }
  const pathOf = (visit: Visit): (string | number)[] => {
    const path: (string | number)[] = [];
    for (let at: Visit | undefined = visit; at?.parent; at = at.parent) path.push(at.key as string | number);
    return path.reverse();
  };
  const pending: Visit[] = [{ item: value, parent: undefined, key: undefined }];
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    const { item } = visit;
    if (item === null || typeof item !== 'object') continue;
    if (Array.isArray(item)) {
      for (let index = 0; index < item.length; index++)
        pending.push({ item: item[index], parent: visit, key: index });
      continue;
    }
    if (Object.hasOwn(item, '__proto__')) return [...pathOf(visit), '__proto__'];
    for (const [key, child] of Object.entries(item)) pending.push({ item: child, parent: visit, key });
  }
  return undefined;
};
