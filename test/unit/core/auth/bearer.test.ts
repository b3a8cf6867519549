import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../../../lambdas/core/auth';

describe('bearerToken', () => {
  it('returns the token of a Bearer header, whatever the scheme case', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('BEARER  abc-_.d+/ef==')).toBe('abc-_.d+/ef==');
  });

  it('returns undefined for a missing or malformed header', () => {
    for (const value of [
      undefined,
      null,
      '',
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      'Bearer a b',
      'Bearerabc',
    ]) {
      expect(bearerToken(value)).toBeUndefined();
    }
  });
});
