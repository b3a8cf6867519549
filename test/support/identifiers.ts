import fc from 'fast-check';
import { type BoundedIdentifier, IDENTIFIER_BYTES } from '../../lambdas/core/identifiers';

/** One character of each UTF-8 width (1–4 bytes), none of them whitespace. */
const CHARACTERS = ['a', 'é', '€', '😀'] as const;

/**
 * Exactly `bytes` UTF-8 bytes: `pattern`'s characters over and over while the next one fits, then ASCII to
 * make up the rest. So every width meets the bound, and a 4-byte character can straddle it.
 */
export const identifierOfBytes = (bytes: number, pattern: readonly string[]): string => {
  let out = '';
  let used = 0;
  for (let index = 0; ; index++) {
    const next = pattern[index % pattern.length] as string;
    const size = Buffer.byteLength(next);
    if (used + size > bytes) break;
    out += next;
    used += size;
  }
  return out + 'x'.repeat(bytes - used);
};

export interface NearBound {
  readonly value: string;
  readonly bytes: number;
  /** Whether the bound allows it. */
  readonly within: boolean;
}

/**
 * Identifiers of `kind` at and around its bound (bound − 4 … bound + 4 bytes, and a few far past it), in a
 * random mix of 1- to 4-byte characters, starting with `prefix` (ASCII) when given, to keep tests apart.
 */
export const nearBound = (kind: BoundedIdentifier, prefix = ''): fc.Arbitrary<NearBound> => {
  const bound = IDENTIFIER_BYTES[kind];
  return fc
    .tuple(
      fc.oneof(
        { weight: 9, arbitrary: fc.integer({ min: bound - 4, max: bound + 4 }) },
        { weight: 1, arbitrary: fc.integer({ min: bound + 5, max: 4 * bound }) },
      ),
      fc.array(fc.constantFrom(...CHARACTERS), { minLength: 1, maxLength: 8 }),
    )
    .map(([bytes, pattern]) => ({
      value: prefix + identifierOfBytes(bytes - prefix.length, pattern),
      bytes,
      within: bytes <= bound,
    }));
};
