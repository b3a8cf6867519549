// Apart from identifiers.ts so that token verification, which checks bounds too, loads no zod.
import { type BoundedIdentifier, describeBound, IDENTIFIER_BYTES, utf8Bytes } from './identifiers';
import { NAME_BREAKING_MESSAGE, NAME_CHARACTERS } from './text-policy';
import * as z from './zod';

/**
 * A string identifier of `kind` within its byte bound (identifiers.ts). `maxLength` is the same number: a
 * character is at least one byte, so it is implied by the bound, and JSON Schema can state it; the description
 * says the bound is in bytes.
 */
export const identifierSchema = (kind: BoundedIdentifier, rule?: string) => {
  const bound = `must be ${describeBound(kind)}`;
  return z.string().check(
    z.minLength(1, { error: bound, abort: true }),
    z.maxLength(IDENTIFIER_BYTES[kind], { error: bound, abort: true }),
    z.refine((value) => utf8Bytes(value) <= IDENTIFIER_BYTES[kind], { error: bound }),
    z.regex(NAME_CHARACTERS, NAME_BREAKING_MESSAGE),
    z.describe(
      `${rule ? `${rule} ` : ''}${describeBound(kind)} (a 4-byte character such as an emoji counts 4)`,
    ),
  );
};
