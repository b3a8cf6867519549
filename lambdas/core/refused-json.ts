import { nameIssue, textIssue } from './text-policy';

/**
 * The first thing in a parsed JSON body (or frame) that no route accepts, with its path, or undefined:
 * - a key named `__proto__`: `JSON.parse` keeps it as an own property, but copying the object (a schema's output,
 *   a spread) turns it into the prototype, so the field would vanish without a word;
 * - a string or key that breaks the text policy (text-policy.ts): any string with an unpaired surrogate or NUL,
 *   any key with control or bidirectional formatting characters too (keys are names). A key's path is its
 *   object's, so the answer never echoes the offending key.
 * Iterative and linear: a body can nest 100,000 levels before any depth check, so each visited value links to its
 * parent and the path is built only for what is found.
 */
export const refusedJson = (value: unknown): { path: (string | number)[]; issue: string } | undefined => {
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
    if (typeof item === 'string') {
      const issue = textIssue(item);
      if (issue) return { path: pathOf(visit), issue };
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index--)
        pending.push({ item: item[index], parent: visit, key: index });
      continue;
    }
    if (Object.hasOwn(item, '__proto__'))
      return { path: [...pathOf(visit), '__proto__'], issue: 'the key __proto__ is not accepted' };
    const entries = Object.entries(item);
    for (const [key] of entries) {
      const issue = nameIssue(key);
      if (issue) return { path: pathOf(visit), issue: `keys ${issue}` };
    }
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, child] = entries[index] as [string, unknown];
      pending.push({ item: child, parent: visit, key });
    }
  }
  return undefined;
};
