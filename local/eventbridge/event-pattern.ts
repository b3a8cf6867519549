/**
 * EventBridge event pattern matching, following AWS's documented semantics
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html):
 *
 * - a pattern is an object; every key must match (AND); `$or` takes a list of sub-patterns (any must match);
 * - a key whose pattern value is an object descends into the event's nested object;
 * - a key whose pattern value is an array is a leaf: it matches when ANY of its matchers matches ANY of the
 *   event's values there (an array in the event matches when one of its elements matches);
 * - matchers: exact values (string, number compared numerically, boolean, null), `prefix`, `suffix`
 *   (both also with `{ equals-ignore-case }`), `equals-ignore-case`, `wildcard`, `anything-but`
 *   (value, list, `{ prefix }`, `{ suffix }`, `{ equals-ignore-case }`, `{ wildcard }`), `exists`, `numeric`,
 *   `cidr` (IPv4 and IPv6).
 *
 * Patterns are compiled once (`compileEventPattern`), which rejects what EventBridge rejects (malformed
 * patterns, unknown operators, empty objects, `**` or a bad escape in a wildcard, numeric ranges not of the
 * form `=`, lower bound, upper bound or lower-then-upper with bottom < top) instead of silently matching nothing.
 * The rules follow AWS's open-source matcher, event-ruler, which EventBridge runs.
 */
import { isIPv4, isIPv6 } from 'node:net';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

type LeafMatcher =
  | { readonly kind: 'exact'; readonly value: string | number | boolean | null }
  | { readonly kind: 'prefix' | 'suffix' | 'equals-ignore-case'; readonly value: string }
  | { readonly kind: 'wildcard'; readonly regExp: RegExp }
  | { readonly kind: 'prefix-ignore-case' | 'suffix-ignore-case'; readonly value: string }
  | { readonly kind: 'exists'; readonly value: boolean }
  | { readonly kind: 'numeric'; readonly checks: readonly NumericCheck[] }
  | { readonly kind: 'cidr'; readonly family: 4 | 6; readonly network: bigint; readonly mask: bigint }
  | { readonly kind: 'anything-but'; readonly test: (value: Json) => boolean };

interface NumericCheck {
  readonly op: '=' | '<' | '<=' | '>' | '>=';
  readonly bound: number;
}

interface CompiledNode {
  readonly leaves: ReadonlyMap<string, readonly LeafMatcher[]>;
  readonly children: ReadonlyMap<string, CompiledNode>;
  readonly anyOf: readonly CompiledNode[];
}

export class InvalidEventPatternError extends Error {
  constructor(path: string, reason: string) {
    super(`Invalid event pattern at ${path || '<root>'}: ${reason}`);
    this.name = 'InvalidEventPatternError';
  }
}

export interface CompiledEventPattern {
  matches(event: unknown): boolean;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const NUMERIC_OPS = new Set(['=', '<', '<=', '>', '>=']);

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A wildcard as EventBridge reads it: `*` matches any run of characters, `\*` a literal star and `\\` a
 * literal backslash; `**` and any other backslash are errors.
 */
const wildcardToRegExp = (path: string, glob: string): RegExp => {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index] as string;
    if (char === '*') {
      if (glob[index + 1] === '*') {
        throw new InvalidEventPatternError(path, `consecutive wildcard characters at position ${index}`);
      }
      source += '.*';
    } else if (char === '\\') {
      const next = glob[index + 1];
      if (next !== '*' && next !== '\\') {
        throw new InvalidEventPatternError(path, `invalid escape character at position ${index}`);
      }
      source += escapeRegExp(next);
      index++;
    } else {
      source += escapeRegExp(char);
    }
  }
  return new RegExp(`^${source}$`, 's');
};

/** An IP address as a number with its family; undefined for anything that is not an address. */
const parseIp = (address: string): { family: 4 | 6; value: bigint } | undefined => {
  if (isIPv4(address)) {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) return undefined;
    return {
      family: 4,
      value: address.split('.').reduce((sum, octet) => (sum << 8n) + BigInt(octet), 0n),
    };
  }
  if (!isIPv6(address)) return undefined;
  let text = address;
  // A trailing dotted IPv4 part (`::ffff:10.0.0.1`) is two 16-bit groups.
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted?.[1]) {
    const [a, b, c, d] = dotted[1].split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return { family: 6, value: groups.reduce((sum, group) => (sum << 16n) + BigInt(`0x${group}`), 0n) };
};

const compileCidr = (path: string, operand: unknown): LeafMatcher => {
  const [address, bits, ...extra] = typeof operand === 'string' ? operand.split('/') : [];
  const parsed = address === undefined ? undefined : parseIp(address);
  const width = parsed?.family === 4 ? 32 : 128;
  const prefixLength = bits !== undefined && /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!parsed || extra.length > 0 || !(prefixLength >= 0 && prefixLength <= width)) {
    throw new InvalidEventPatternError(
      path,
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    );
  }
  const all = (1n << BigInt(width)) - 1n;
  const mask = all ^ ((1n << BigInt(width - prefixLength)) - 1n);
  return { kind: 'cidr', family: parsed.family, network: parsed.value & mask, mask };
};

const LOWER_BOUNDS = new Set(['>', '>=']);
const UPPER_BOUNDS = new Set(['<', '<=']);

/** EventBridge's numeric forms: `[=, n]`, `[> or >=, n]`, `[< or <=, n]`, or `[> or >=, a, < or <=, b]` with a < b. */
const compileNumeric = (path: string, spec: unknown): LeafMatcher => {
  if (!Array.isArray(spec) || (spec.length !== 2 && spec.length !== 4)) {
    throw new InvalidEventPatternError(
      path,
      'numeric expects [op, number] or [lower op, number, upper op, number]',
    );
  }
  const checks: NumericCheck[] = [];
  for (let index = 0; index < spec.length; index += 2) {
    const op = spec[index];
    const bound = spec[index + 1];
    if (
      typeof op !== 'string' ||
      !NUMERIC_OPS.has(op) ||
      typeof bound !== 'number' ||
      !Number.isFinite(bound)
    ) {
      throw new InvalidEventPatternError(
        path,
        // JSON.stringify would print an infinite bound as null.
        `numeric operator ${JSON.stringify(op)} with ${typeof bound === 'number' ? bound : JSON.stringify(bound)} is invalid`,
      );
    }
    checks.push({ op: op as NumericCheck['op'], bound });
  }
  const [first, second] = checks as [NumericCheck, NumericCheck | undefined];
  if (second) {
    if (!LOWER_BOUNDS.has(first.op) || !UPPER_BOUNDS.has(second.op)) {
      throw new InvalidEventPatternError(
        path,
        'a numeric range is a lower bound (> or >=) then an upper bound (< or <=)',
      );
    }
    if (first.bound >= second.bound) {
      throw new InvalidEventPatternError(path, "a numeric range's bottom must be less than its top");
    }
  }
  return { kind: 'numeric', checks };
};

const compileAnythingBut = (path: string, spec: unknown): LeafMatcher => {
  if (typeof spec === 'string' || typeof spec === 'number') {
    return { kind: 'anything-but', test: (value) => value !== spec };
  }
  if (Array.isArray(spec)) {
    const allStrings = spec.every((item) => typeof item === 'string');
    const allNumbers = spec.every((item) => typeof item === 'number');
    if (spec.length === 0 || !(allStrings || allNumbers)) {
      throw new InvalidEventPatternError(path, 'anything-but list must hold only strings or only numbers');
    }
    return { kind: 'anything-but', test: (value) => !spec.some((item) => value === item) };
  }
  if (isPlainObject(spec)) {
    const [operator, ...rest] = Object.keys(spec);
    if (!operator || rest.length > 0) {
      throw new InvalidEventPatternError(path, 'anything-but object takes exactly one operator');
    }
    const operand = spec[operator];
    const strings = typeof operand === 'string' ? [operand] : Array.isArray(operand) ? operand : undefined;
    if (!strings || strings.length === 0 || !strings.every((item) => typeof item === 'string')) {
      throw new InvalidEventPatternError(
        path,
        `anything-but ${operator} expects a string or a list of strings`,
      );
    }
    const list = strings as string[];
    const onStrings =
      (predicate: (value: string) => boolean) =>
      (value: Json): boolean =>
        typeof value === 'string' && !predicate(value);
    switch (operator) {
      case 'prefix':
        return {
          kind: 'anything-but',
          test: onStrings((value) => list.some((item) => value.startsWith(item))),
        };
      case 'suffix':
        return {
          kind: 'anything-but',
          test: onStrings((value) => list.some((item) => value.endsWith(item))),
        };
      case 'equals-ignore-case': {
        const lowered = list.map((item) => item.toLowerCase());
        return { kind: 'anything-but', test: onStrings((value) => lowered.includes(value.toLowerCase())) };
      }
      case 'wildcard': {
        const globs = list.map((glob) => wildcardToRegExp(path, glob));
        return { kind: 'anything-but', test: onStrings((value) => globs.some((glob) => glob.test(value))) };
      }
      default:
        throw new InvalidEventPatternError(path, `unsupported anything-but operator ${operator}`);
    }
  }
  throw new InvalidEventPatternError(path, 'anything-but expects a value, a list or an operator object');
};

const compileStringOperand = (path: string, operator: 'prefix' | 'suffix', operand: unknown): LeafMatcher => {
  if (typeof operand === 'string') return { kind: operator, value: operand };
  if (
    isPlainObject(operand) &&
    Object.keys(operand).length === 1 &&
    typeof operand['equals-ignore-case'] === 'string'
  ) {
    return { kind: `${operator}-ignore-case`, value: operand['equals-ignore-case'].toLowerCase() };
  }
  throw new InvalidEventPatternError(
    path,
    `${operator} expects a string or { "equals-ignore-case": string }`,
  );
};

const compileMatcher = (path: string, spec: unknown): LeafMatcher => {
  if (spec === null || typeof spec === 'string' || typeof spec === 'number' || typeof spec === 'boolean') {
    return { kind: 'exact', value: spec };
  }
  if (!isPlainObject(spec)) {
    throw new InvalidEventPatternError(
      path,
      'a matcher is a value or an operator object (nested arrays are invalid)',
    );
  }
  const keys = Object.keys(spec);
  const [operator] = keys;
  if (!operator || keys.length !== 1) {
    throw new InvalidEventPatternError(path, 'an operator object takes exactly one operator');
  }
  const operand = spec[operator];
  switch (operator) {
    case 'prefix':
    case 'suffix':
      return compileStringOperand(path, operator, operand);
    case 'equals-ignore-case':
      if (typeof operand !== 'string')
        throw new InvalidEventPatternError(path, 'equals-ignore-case expects a string');
      return { kind: 'equals-ignore-case', value: operand.toLowerCase() };
    case 'wildcard':
      if (typeof operand !== 'string') throw new InvalidEventPatternError(path, 'wildcard expects a string');
      return { kind: 'wildcard', regExp: wildcardToRegExp(path, operand) };
    case 'exists':
      if (typeof operand !== 'boolean')
        throw new InvalidEventPatternError(path, 'exists expects true or false');
      return { kind: 'exists', value: operand };
    case 'numeric':
      return compileNumeric(path, operand);
    case 'anything-but':
      return compileAnythingBut(path, operand);
    case 'cidr':
      return compileCidr(path, operand);
    default:
      throw new InvalidEventPatternError(path, `unsupported operator ${operator}`);
  }
};

const compileNode = (path: string, pattern: unknown): CompiledNode => {
  if (!isPlainObject(pattern)) throw new InvalidEventPatternError(path, 'expected an object');
  if (Object.keys(pattern).length === 0)
    throw new InvalidEventPatternError(path, 'empty objects are not allowed');
  const leaves = new Map<string, LeafMatcher[]>();
  const children = new Map<string, CompiledNode>();
  const anyOf: CompiledNode[] = [];
  for (const [key, value] of Object.entries(pattern)) {
    const keyPath = path ? `${path}.${key}` : key;
    if (key === '$or') {
      if (!Array.isArray(value) || value.length < 2) {
        throw new InvalidEventPatternError(keyPath, '$or expects a list of at least two patterns');
      }
      anyOf.push(...value.map((alternative, index) => compileNode(`${keyPath}[${index}]`, alternative)));
    } else if (Array.isArray(value)) {
      if (value.length === 0)
        throw new InvalidEventPatternError(keyPath, 'an empty matcher list matches nothing');
      leaves.set(
        key,
        value.map((matcher) => compileMatcher(keyPath, matcher)),
      );
    } else if (isPlainObject(value)) {
      children.set(key, compileNode(keyPath, value));
    } else {
      throw new InvalidEventPatternError(
        keyPath,
        'a field pattern must be an array of matchers or an object',
      );
    }
  }
  return { leaves, children, anyOf };
};

const numericHolds = (value: number, { op, bound }: NumericCheck): boolean => {
  switch (op) {
    case '=':
      return value === bound;
    case '<':
      return value < bound;
    case '<=':
      return value <= bound;
    case '>':
      return value > bound;
    case '>=':
      return value >= bound;
  }
};

/** Leaf values of an event field: scalars, and scalars inside arrays; objects are intermediate nodes. */
const leafValues = (value: unknown): Json[] => {
  if (value === undefined || isPlainObject(value)) return [];
  if (Array.isArray(value)) return value.flatMap((item) => leafValues(item));
  return [value as Json];
};

const leafMatches = (matcher: LeafMatcher, value: Json): boolean => {
  switch (matcher.kind) {
    case 'exact':
      return value === matcher.value;
    case 'prefix':
      return typeof value === 'string' && value.startsWith(matcher.value);
    case 'suffix':
      return typeof value === 'string' && value.endsWith(matcher.value);
    case 'prefix-ignore-case':
      return typeof value === 'string' && value.toLowerCase().startsWith(matcher.value);
    case 'suffix-ignore-case':
      return typeof value === 'string' && value.toLowerCase().endsWith(matcher.value);
    case 'equals-ignore-case':
      return typeof value === 'string' && value.toLowerCase() === matcher.value;
    case 'wildcard':
      return typeof value === 'string' && matcher.regExp.test(value);
    case 'numeric':
      return typeof value === 'number' && matcher.checks.every((check) => numericHolds(value, check));
    case 'cidr': {
      const address = typeof value === 'string' ? parseIp(value) : undefined;
      return address?.family === matcher.family && (address.value & matcher.mask) === matcher.network;
    }
    case 'anything-but':
      return matcher.test(value);
    case 'exists':
      return false; // handled on the field, not per value
  }
};

const fieldMatches = (matchers: readonly LeafMatcher[], fieldValue: unknown): boolean => {
  const values = leafValues(fieldValue);
  return matchers.some((matcher) =>
    matcher.kind === 'exists'
      ? matcher.value === values.length > 0
      : values.some((value) => leafMatches(matcher, value)),
  );
};

const nodeMatches = (node: CompiledNode, event: unknown): boolean => {
  // An array of objects in the event matches when one element matches the whole sub-pattern.
  if (Array.isArray(event)) return event.some((element) => nodeMatches(node, element));
  const record = isPlainObject(event) ? event : {};
  for (const [key, matchers] of node.leaves) {
    if (!fieldMatches(matchers, record[key])) return false;
  }
  for (const [key, child] of node.children) {
    // A missing subtree reads as `{}`, which can still satisfy a sub-pattern made only of `exists: false`.
    if (!nodeMatches(child, record[key])) return false;
  }
  return node.anyOf.length === 0 || node.anyOf.some((alternative) => nodeMatches(alternative, record));
};

/** Compiles an event pattern; throws InvalidEventPatternError for a malformed pattern or unknown operator. */
export const compileEventPattern = (pattern: unknown): CompiledEventPattern => {
  const root = compileNode('', pattern);
  return { matches: (event) => nodeMatches(root, event) };
};
