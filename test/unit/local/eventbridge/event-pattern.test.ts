import { describe, expect, it } from 'vitest';
import { compileEventPattern, InvalidEventPatternError } from '../../../../local/eventbridge/event-pattern';

/** An EventBridge envelope as targets receive it, with a detail rich enough for every operator. */
const event = {
  version: '0',
  id: '3e3c153a-8339-4e30-8c35-687ebef853fe',
  'detail-type': 'Order Placed',
  source: 'com.example.orders',
  account: '000000000000',
  time: '2026-10-02T18:43:48Z',
  region: 'eu-west-1',
  resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f', 'arn:aws:s3:::bucket'],
  detail: {
    state: 'running',
    'c-count': 5,
    price: 10.5,
    archive: true,
    cancelled: false,
    note: null,
    empty: '',
    'source-ip': '10.0.0.42',
    filename: 'photo.PNG',
    tags: ['blue', 'green'],
    scores: [3, 99],
    customer: { tier: 'gold', address: { country: 'FR' } },
    items: [
      { sku: 'A-1', quantity: 2 },
      { sku: 'B-2', quantity: 7 },
    ],
  },
};

type Case = readonly [description: string, pattern: Record<string, unknown>, matches: boolean];

const cases: Record<string, readonly Case[]> = {
  'exact values': [
    ['string equal', { source: ['com.example.orders'] }, true],
    ['string differs', { source: ['com.example.billing'] }, false],
    ['one of several values', { source: ['x', 'com.example.orders'] }, true],
    ['case sensitive', { source: ['COM.EXAMPLE.ORDERS'] }, false],
    ['number equal', { detail: { 'c-count': [5] } }, true],
    ['number equal written as a float', { detail: { 'c-count': [5.0] } }, true],
    ['number is not its string', { detail: { 'c-count': ['5'] } }, false],
    ['boolean true', { detail: { archive: [true] } }, true],
    ['boolean mismatch', { detail: { archive: [false] } }, false],
    ['false is a value', { detail: { cancelled: [false] } }, true],
    ['null matches null', { detail: { note: [null] } }, true],
    ['null is not the empty string', { detail: { empty: [null] } }, false],
    ['empty string matches empty string', { detail: { empty: [''] } }, true],
    ['empty string is not null', { detail: { note: [''] } }, false],
    ['missing field does not match', { detail: { absent: ['x'] } }, false],
    ['several fields are ANDed', { source: ['com.example.orders'], 'detail-type': ['Other'] }, false],
  ],
  'nested fields': [
    ['nested equal', { detail: { customer: { tier: ['gold'] } } }, true],
    ['deeply nested', { detail: { customer: { address: { country: ['FR'] } } } }, true],
    ['deeply nested mismatch', { detail: { customer: { address: { country: ['DE'] } } } }, false],
    ['object pattern on a scalar field', { detail: { state: { inner: ['x'] } } }, false],
    ['leaf pattern on an object field', { detail: { customer: ['gold'] } }, false],
  ],
  'arrays in the event': [
    ['any element matches', { resources: ['arn:aws:s3:::bucket'] }, true],
    ['no element matches', { resources: ['arn:aws:s3:::other'] }, false],
    ['array of strings', { detail: { tags: ['green', 'red'] } }, true],
    ['array of numbers with numeric', { detail: { scores: [{ numeric: ['>', 50] }] } }, true],
    ['objects in an array: one element matches', { detail: { items: { sku: ['B-2'] } } }, true],
    [
      'objects in an array: fields must match within one element',
      { detail: { items: { sku: ['A-1'], quantity: [7] } } },
      false,
    ],
    ['objects in an array: same element', { detail: { items: { sku: ['B-2'], quantity: [7] } } }, true],
  ],
  prefix: [
    ['prefix matches', { region: [{ prefix: 'eu-' }] }, true],
    ['prefix does not match', { region: [{ prefix: 'us-' }] }, false],
    ['prefix on time', { time: [{ prefix: '2026-10-02' }] }, true],
    ['prefix only on strings', { detail: { 'c-count': [{ prefix: '5' }] } }, false],
    ['prefix ignoring case', { source: [{ prefix: { 'equals-ignore-case': 'COM.EXAMPLE' } }] }, true],
    ['prefix ignoring case mismatch', { source: [{ prefix: { 'equals-ignore-case': 'ORG.' } }] }, false],
  ],
  suffix: [
    ['suffix matches', { source: [{ suffix: '.orders' }] }, true],
    ['suffix is case sensitive', { detail: { filename: [{ suffix: '.png' }] } }, false],
    ['suffix ignoring case', { detail: { filename: [{ suffix: { 'equals-ignore-case': '.png' } }] } }, true],
    ['suffix does not match', { source: [{ suffix: '.billing' }] }, false],
  ],
  'equals-ignore-case': [
    ['same letters other case', { 'detail-type': [{ 'equals-ignore-case': 'order placed' }] }, true],
    ['other letters', { 'detail-type': [{ 'equals-ignore-case': 'order shipped' }] }, false],
  ],
  wildcard: [
    ['star in the middle', { source: [{ wildcard: 'com.*.orders' }] }, true],
    ['star does not match', { source: [{ wildcard: 'org.*' }] }, false],
    ['regex characters are literal', { source: [{ wildcard: 'com.example.order?' }] }, false],
  ],
  'anything-but': [
    ['single string excluded', { detail: { state: [{ 'anything-but': 'running' }] } }, false],
    ['single string other', { detail: { state: [{ 'anything-but': 'stopped' }] } }, true],
    ['number excluded', { detail: { 'c-count': [{ 'anything-but': 5 }] } }, false],
    ['number other', { detail: { 'c-count': [{ 'anything-but': 6 }] } }, true],
    ['list excluding the value', { detail: { state: [{ 'anything-but': ['stopped', 'running'] }] } }, false],
    ['list not holding the value', { detail: { state: [{ 'anything-but': ['stopped', 'pending'] }] } }, true],
    ['prefix excluded', { region: [{ 'anything-but': { prefix: 'eu-' } }] }, false],
    ['prefix not excluded', { region: [{ 'anything-but': { prefix: 'us-' } }] }, true],
    ['suffix excluded', { detail: { filename: [{ 'anything-but': { suffix: '.PNG' } }] } }, false],
    [
      'ignore-case list excluded',
      { detail: { state: [{ 'anything-but': { 'equals-ignore-case': ['RUNNING', 'x'] } }] } },
      false,
    ],
    ['missing field never matches anything-but', { detail: { absent: [{ 'anything-but': 'x' }] } }, false],
  ],
  exists: [
    ['exists true on a present leaf', { detail: { state: [{ exists: true }] } }, true],
    ['exists true on a missing field', { detail: { absent: [{ exists: true }] } }, false],
    ['exists false on a missing field', { detail: { absent: [{ exists: false }] } }, true],
    ['exists false on a present leaf', { detail: { state: [{ exists: false }] } }, false],
    ['exists true on a null leaf', { detail: { note: [{ exists: true }] } }, true],
    ['exists only works on leaves', { detail: { customer: [{ exists: true }] } }, false],
    ['exists false under a missing object', { detail: { nothing: { here: [{ exists: false }] } } }, true],
  ],
  numeric: [
    ['in range', { detail: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] } }, true],
    ['upper bound exclusive', { detail: { 'c-count': [{ numeric: ['>', 0, '<', 5] }] } }, false],
    ['equal', { detail: { price: [{ numeric: ['=', 10.5] }] } }, true],
    ['greater or equal', { detail: { price: [{ numeric: ['>=', 11] }] } }, false],
    ['below', { detail: { price: [{ numeric: ['<', 100] }] } }, true],
    ['not on strings', { detail: { state: [{ numeric: ['>', 0] }] } }, false],
  ],
  cidr: [
    ['inside the block', { detail: { 'source-ip': [{ cidr: '10.0.0.0/24' }] } }, true],
    ['outside the block', { detail: { 'source-ip': [{ cidr: '10.0.1.0/24' }] } }, false],
  ],
  $or: [
    [
      'second alternative matches',
      {
        source: ['com.example.orders'],
        $or: [{ region: ['us-east-1'] }, { detail: { state: ['running'] } }],
      },
      true,
    ],
    [
      'no alternative matches',
      { $or: [{ region: ['us-east-1'] }, { detail: { state: ['stopped'] } }] },
      false,
    ],
    [
      'alternatives nested under detail',
      { detail: { $or: [{ 'c-count': [{ numeric: ['>', 100] }] }, { tags: ['blue'] }] } },
      true,
    ],
  ],
};

describe('EventBridge event patterns (AWS content filtering semantics)', () => {
  for (const [operator, table] of Object.entries(cases)) {
    describe(operator, () => {
      it.each(table)('%s', (_description, pattern, expected) => {
        expect(compileEventPattern(pattern).matches(event)).toBe(expected);
      });
    });
  }

  it('matches several matchers of one field as OR', () => {
    const pattern = compileEventPattern({ detail: { state: [{ prefix: 'stop' }, { suffix: 'ing' }] } });
    expect(pattern.matches(event)).toBe(true);
    expect(pattern.matches({ detail: { state: 'idle' } })).toBe(false);
  });

  it('treats \\* in a wildcard as a literal star and \\\\ as a literal backslash, as EventBridge does', () => {
    const star = compileEventPattern({ name: [{ wildcard: 'a\\*b*' }] });
    expect(star.matches({ name: 'a*bc' })).toBe(true);
    expect(star.matches({ name: 'axbc' })).toBe(false);
    const backslash = compileEventPattern({ name: [{ wildcard: 'dir\\\\*' }] });
    expect(backslash.matches({ name: 'dir\\file' })).toBe(true);
    expect(backslash.matches({ name: 'dirfile' })).toBe(false);
  });

  it('matches IPv6 cidr blocks, in any written form of the address', () => {
    const block = compileEventPattern({ ip: [{ cidr: '2001:db8::/32' }] });
    expect(block.matches({ ip: '2001:db8::1' })).toBe(true);
    expect(block.matches({ ip: '2001:0DB8:0000:0000:0000:0000:0000:0001' })).toBe(true);
    expect(block.matches({ ip: '2001:db9::1' })).toBe(false);
    expect(block.matches({ ip: '10.0.0.1' })).toBe(false);
    expect(block.matches({ ip: 'not an address' })).toBe(false);
    const host = compileEventPattern({ ip: [{ cidr: '::1/128' }] });
    expect(host.matches({ ip: '0:0:0:0:0:0:0:1' })).toBe(true);
    expect(host.matches({ ip: '::2' })).toBe(false);
    expect(compileEventPattern({ ip: [{ cidr: '::/0' }] }).matches({ ip: 'fe80::1' })).toBe(true);
    expect(compileEventPattern({ ip: [{ cidr: '10.0.0.0/8' }] }).matches({ ip: '2001:db8::1' })).toBe(false);
  });

  it.each([
    ['an unknown operator', { source: [{ contains: 'x' }] }, 'source', 'unsupported operator contains'],
    [
      'a leaf that is not a list',
      { source: 'com.example.orders' },
      'source',
      'a field pattern must be an array of matchers or an object',
    ],
    ['an empty matcher list', { source: [] }, 'source', 'an empty matcher list matches nothing'],
    [
      'a malformed numeric range',
      { detail: { n: [{ numeric: ['>', 'zero'] }] } },
      'detail.n',
      'numeric operator ">" with "zero" is invalid',
    ],
    [
      'an anything-but list mixing types',
      { detail: { n: [{ 'anything-but': ['a', 1] }] } },
      'detail.n',
      'anything-but list must hold only strings or only numbers',
    ],
    ['an empty pattern', {}, '<root>', 'empty objects are not allowed'],
    ['an empty nested pattern', { detail: {} }, 'detail', 'empty objects are not allowed'],
    ['an empty $or alternative', { $or: [{}, { source: ['x'] }] }, '$or[0]', 'empty objects are not allowed'],
    [
      'consecutive wildcards',
      { source: [{ wildcard: 'com.**.orders' }] },
      'source',
      'consecutive wildcard characters at position 4',
    ],
    [
      'consecutive wildcards in anything-but',
      { source: [{ 'anything-but': { wildcard: 'a**' } }] },
      'source',
      'consecutive wildcard characters at position 1',
    ],
    [
      'an escape other than \\* and \\\\ in a wildcard',
      { source: [{ wildcard: 'a\\b*' }] },
      'source',
      'invalid escape character at position 1',
    ],
    [
      'a trailing backslash in a wildcard',
      { source: [{ wildcard: 'a*\\' }] },
      'source',
      'invalid escape character at position 2',
    ],
    [
      'a numeric range whose bottom is not below its top',
      { n: [{ numeric: ['>', 5, '<', 5] }] },
      'n',
      "a numeric range's bottom must be less than its top",
    ],
    [
      'a numeric range with the upper bound first',
      { n: [{ numeric: ['<', 10, '>', 0] }] },
      'n',
      'a numeric range is a lower bound (> or >=) then an upper bound (< or <=)',
    ],
    [
      'a numeric range with two lower bounds',
      { n: [{ numeric: ['>', 0, '>=', 1] }] },
      'n',
      'a numeric range is a lower bound (> or >=) then an upper bound (< or <=)',
    ],
    [
      'a numeric = followed by a bound',
      { n: [{ numeric: ['=', 5, '<', 10] }] },
      'n',
      'a numeric range is a lower bound (> or >=) then an upper bound (< or <=)',
    ],
    [
      'a numeric range of three pairs',
      { n: [{ numeric: ['>', 0, '<', 10, '<', 20] }] },
      'n',
      'numeric expects [op, number] or [lower op, number, upper op, number]',
    ],
    [
      'a cidr prefix longer than the address',
      { ip: [{ cidr: '2001:db8::/129' }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
    [
      'a cidr that is not an address',
      { ip: [{ cidr: '2001:db8:::/32' }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
    [
      '$or with one alternative',
      { $or: [{ source: ['x'] }] },
      '$or',
      '$or expects a list of at least two patterns',
    ],
    [
      'an operator object with two operators',
      { source: [{ prefix: 'a', suffix: 'b' }] },
      'source',
      'an operator object takes exactly one operator',
    ],
    ['an empty operator object', { source: [{}] }, 'source', 'an operator object takes exactly one operator'],
    [
      'a nested list',
      { source: [['a']] },
      'source',
      'a matcher is a value or an operator object (nested arrays are invalid)',
    ],
    ['a pattern that is a list', ['a'], '<root>', 'expected an object'],
    [
      'a field pattern that is a number',
      { detail: { n: 5 } },
      'detail.n',
      'a field pattern must be an array of matchers or an object',
    ],
    [
      '$or that is not a list',
      { $or: { source: ['x'] } },
      '$or',
      '$or expects a list of at least two patterns',
    ],
    [
      'prefix of a number',
      { source: [{ prefix: 1 }] },
      'source',
      'prefix expects a string or { "equals-ignore-case": string }',
    ],
    [
      'prefix with an unknown option',
      { source: [{ prefix: { 'equals-ignore-case': 1 } }] },
      'source',
      'prefix expects a string or { "equals-ignore-case": string }',
    ],
    [
      'suffix with two options',
      { source: [{ suffix: { 'equals-ignore-case': 'a', x: 'b' } }] },
      'source',
      'suffix expects a string or { "equals-ignore-case": string }',
    ],
    [
      'equals-ignore-case of a number',
      { source: [{ 'equals-ignore-case': 1 }] },
      'source',
      'equals-ignore-case expects a string',
    ],
    ['wildcard of a number', { source: [{ wildcard: 1 }] }, 'source', 'wildcard expects a string'],
    ['exists of a string', { source: [{ exists: 'yes' }] }, 'source', 'exists expects true or false'],
    [
      'numeric that is not a list',
      { n: [{ numeric: 5 }] },
      'n',
      'numeric expects [op, number] or [lower op, number, upper op, number]',
    ],
    [
      'numeric with an infinite bound',
      { n: [{ numeric: ['<', Number.POSITIVE_INFINITY] }] },
      'n',
      'numeric operator "<" with Infinity is invalid',
    ],
    [
      'numeric with an unknown operator',
      { n: [{ numeric: ['!=', 5] }] },
      'n',
      'numeric operator "!=" with 5 is invalid',
    ],
    [
      'numeric of three items',
      { n: [{ numeric: ['>', 5, '<'] }] },
      'n',
      'numeric expects [op, number] or [lower op, number, upper op, number]',
    ],
    [
      'anything-but of a boolean',
      { n: [{ 'anything-but': true }] },
      'n',
      'anything-but expects a value, a list or an operator object',
    ],
    [
      'anything-but of an empty list',
      { n: [{ 'anything-but': [] }] },
      'n',
      'anything-but list must hold only strings or only numbers',
    ],
    [
      'anything-but with two operators',
      { n: [{ 'anything-but': { prefix: 'a', suffix: 'b' } }] },
      'n',
      'anything-but object takes exactly one operator',
    ],
    [
      'anything-but with no operator',
      { n: [{ 'anything-but': {} }] },
      'n',
      'anything-but object takes exactly one operator',
    ],
    [
      'anything-but with an unknown operator',
      { n: [{ 'anything-but': { contains: 'a' } }] },
      'n',
      'unsupported anything-but operator contains',
    ],
    [
      'anything-but prefix of a number',
      { n: [{ 'anything-but': { prefix: 1 } }] },
      'n',
      'anything-but prefix expects a string or a list of strings',
    ],
    [
      'anything-but prefix of an empty list',
      { n: [{ 'anything-but': { prefix: [] } }] },
      'n',
      'anything-but prefix expects a string or a list of strings',
    ],
    [
      'anything-but suffix list with a number',
      { n: [{ 'anything-but': { suffix: ['a', 1] } }] },
      'n',
      'anything-but suffix expects a string or a list of strings',
    ],
    [
      'a cidr that is not a string',
      { ip: [{ cidr: 10 }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
    [
      'a cidr with no prefix length',
      { ip: [{ cidr: '10.0.0.0' }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
    [
      'a cidr with two prefix lengths',
      { ip: [{ cidr: '10.0.0.0/8/8' }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
    [
      'an IPv4 cidr prefix over 32',
      { ip: [{ cidr: '10.0.0.0/33' }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
    [
      'a cidr prefix that is not a number',
      { ip: [{ cidr: '10.0.0.0/x' }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
    [
      'a cidr prefix of four digits',
      { ip: [{ cidr: '10.0.0.0/0008' }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
    [
      'a cidr negative prefix',
      { ip: [{ cidr: '10.0.0.0/-1' }] },
      'ip',
      'cidr expects an IPv4 or IPv6 block like "10.0.0.0/24" or "2001:db8::/32"',
    ],
  ])('rejects %s at compile time, naming where and why', (_description, pattern, path, reason) => {
    const error = (() => {
      try {
        compileEventPattern(pattern);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(InvalidEventPatternError);
    expect((error as Error).message).toBe(`Invalid event pattern at ${path}: ${reason}`);
  });
});

describe('EventBridge event patterns at their edges', () => {
  const matches = (pattern: Record<string, unknown>, event: unknown) =>
    compileEventPattern(pattern).matches(event);

  it.each([
    [['>', 5], 5, false],
    [['>', 5], 5.5, true],
    [['>=', 5], 5, true],
    [['>=', 5], 4.9, false],
    [['<=', 5], 5, true],
    [['<=', 5], 5.1, false],
    [['=', 5], 5, true],
    [['=', 5], 5.5, false],
    [['>', 0, '<=', 5], 5, true],
  ])('numeric %j on %s → %s (bounds are exact)', (numeric, n, expected) => {
    expect(matches({ n: [{ numeric }] }, { n })).toBe(expected);
  });

  it('anything-but with a list of prefixes, suffixes, case-insensitive values or wildcards refuses any of them', () => {
    const notPrefixed = { s: [{ 'anything-but': { prefix: ['a', 'b'] } }] };
    expect([matches(notPrefixed, { s: 'apple' }), matches(notPrefixed, { s: 'banana' })]).toEqual([
      false,
      false,
    ]);
    expect(matches(notPrefixed, { s: 'cherry' })).toBe(true);
    const notSuffixed = { s: [{ 'anything-but': { suffix: ['.png', '.jpg'] } }] };
    expect([matches(notSuffixed, { s: 'x.jpg' }), matches(notSuffixed, { s: 'x.gif' })]).toEqual([
      false,
      true,
    ]);
    const notColour = { s: [{ 'anything-but': { 'equals-ignore-case': ['Red', 'blue'] } }] };
    expect([matches(notColour, { s: 'BLUE' }), matches(notColour, { s: 'green' })]).toEqual([false, true]);
    const notGlob = { s: [{ 'anything-but': { wildcard: ['*.png', 'tmp/*'] } }] };
    expect([matches(notGlob, { s: 'a.png' }), matches(notGlob, { s: 'tmp/x' })]).toEqual([false, false]);
    expect(matches(notGlob, { s: 'doc.txt' })).toBe(true);
    const notNumbers = { s: [{ 'anything-but': [1, 2] }] };
    expect([matches(notNumbers, { s: 2 }), matches(notNumbers, { s: 3 })]).toEqual([false, true]);
  });

  it('string operators, anything-but operators included, never match a number', () => {
    for (const matcher of [
      { prefix: { 'equals-ignore-case': '1' } },
      { suffix: { 'equals-ignore-case': '2' } },
      { suffix: '2' },
      { 'equals-ignore-case': '12' },
      { wildcard: '1*' },
      { 'anything-but': { prefix: 'x' } },
      { 'anything-but': { 'equals-ignore-case': 'x' } },
    ]) {
      expect(matches({ s: [matcher] }, { s: 12 }), JSON.stringify(matcher)).toBe(false);
    }
    expect(matches({ s: [{ numeric: ['>', 1] }] }, { s: '5' })).toBe(false);
    expect(matches({ s: [{ cidr: '10.0.0.0/8' }] }, { s: 167772161 })).toBe(false);
    expect([matches({ n: [5] }, { n: '5' }), matches({ n: ['5'] }, { n: 5 })]).toEqual([false, false]);
  });

  it('lets a wildcard span line breaks', () => {
    expect(matches({ s: [{ wildcard: 'a*b' }] }, { s: 'a\nb' })).toBe(true);
  });

  it('matches IPv4 cidr blocks, and IPv6 blocks written with an embedded IPv4 part', () => {
    expect(matches({ ip: [{ cidr: '10.0.0.0/8' }] }, { ip: '10.1.2.3' })).toBe(true);
    expect(matches({ ip: [{ cidr: '10.0.0.0/8' }] }, { ip: '11.1.2.3' })).toBe(false);
    const mapped = { ip: [{ cidr: '::ffff:10.0.0.0/104' }] };
    expect(matches(mapped, { ip: '::ffff:10.1.2.3' })).toBe(true);
    expect(matches(mapped, { ip: '::ffff:11.0.0.1' })).toBe(false);
  });

  it('reads an embedded IPv4 part as the two 16-bit groups it stands for, in a block and in a value', () => {
    const host = { ip: [{ cidr: '::ffff:192.168.10.20/128' }] };
    expect(matches(host, { ip: '::ffff:192.168.10.20' })).toBe(true);
    expect(matches(host, { ip: '::ffff:c0a8:a14' })).toBe(true);
    expect(matches(host, { ip: '::ffff:192.168.10.21' })).toBe(false);
    expect(matches({ ip: [{ cidr: '::ffff:c0a8:0/112' }] }, { ip: '::ffff:192.168.10.20' })).toBe(true);
  });

  it('takes a numeric range whose lower bound is inclusive (>=)', () => {
    const range = { n: [{ numeric: ['>=', 0, '<', 10] }] };
    expect([-1, 0, 9.5, 10].map((n) => matches(range, { n }))).toEqual([false, true, true, false]);
  });

  it('treats a nested field that is not an object as a missing subtree', () => {
    expect(matches({ detail: { a: [{ exists: false }] } }, { detail: 'x' })).toBe(true);
    expect(matches({ detail: { a: [{ exists: false }] } }, { detail: null })).toBe(true);
    expect(matches({ detail: { a: [{ exists: true }] } }, { detail: 'x' })).toBe(false);
  });
});
