import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../client/src/backoff';
import { retryAfterMs } from '../../../client/src/http';
import { TokenSource, tokenTimes } from '../../../client/src/token';
import { userToken } from '../../support/tokens';

const SECRET = 'unit-test-secret-0123456789abcdef0123';
const nowSecs = () => Math.floor(Date.now() / 1000);

describe('TokenSource', () => {
  it('reads exp and iat without verifying, and nothing from a non-JWT', async () => {
    const token = await userToken(SECRET, {}, { expiresInSecs: 120 });
    const times = tokenTimes(token);
    expect((times.exp ?? 0) - (times.iat ?? 0)).toBe(120);
    expect(tokenTimes('not-a-jwt')).toEqual({});
  });

  it('asks the provider once for concurrent callers and reuses the token while it is fresh', async () => {
    const calls: boolean[] = [];
    const tokens = new TokenSource(({ forceRefresh }) => {
      calls.push(forceRefresh);
      return userToken(SECRET, {}, { expiresInSecs: 3600 });
    });
    const [a, b] = await Promise.all([tokens.get(), tokens.get()]);
    expect(a).toBe(b);
    expect(await tokens.get()).toBe(a);
    expect(calls).toEqual([false]);
    await tokens.get(true);
    expect(calls).toEqual([false, true]);
  });

  it('refreshes a minute before exp, or a fifth of a short lifetime before it', async () => {
    const long = new TokenSource(() => userToken(SECRET, {}, { expiresInSecs: 3600 }));
    await long.get();
    expect(long.refreshDelay()).toBeGreaterThan(3_530_000);
    expect(long.refreshDelay()).toBeLessThanOrEqual(3_540_000);
    const short = new TokenSource(() => userToken(SECRET, {}, { expiresInSecs: 10 }));
    await short.get();
    expect(short.refreshDelay()).toBeGreaterThan(7_000);
    expect(short.refreshDelay()).toBeLessThanOrEqual(8_000);
  });

  it('judges expiry by the token’s lifetime when this device’s clock is behind', async () => {
    // Issued "in the future" as this device sees it (its clock is 10 minutes slow): exp alone would look far away.
    const ahead = new TokenSource(() =>
      userToken(SECRET, {}, { expiresInSecs: 300, nowMs: Date.now() + 600_000 }),
    );
    await ahead.get();
    expect(ahead.refreshDelay()).toBeLessThanOrEqual(240_000);
  });

  it('does not turn an already expired token into a refresh loop', async () => {
    const calls: number[] = [];
    const stale = new TokenSource(() => {
      calls.push(1);
      return userToken(SECRET, { exp: nowSecs() - 60, iat: nowSecs() - 660 });
    });
    await stale.get();
    expect(stale.refreshDelay()).toBe(5_000);
    await stale.get();
    expect(calls).toHaveLength(2); // never reused: it is past its refresh time
  });

  it('asks every time for a token without exp', async () => {
    let n = 0;
    const tokens = new TokenSource(() => `opaque-${++n}`);
    expect(await tokens.get()).toBe('opaque-1');
    expect(await tokens.get()).toBe('opaque-2');
    expect(tokens.refreshDelay()).toBeUndefined();
  });
});

describe('backoff and Retry-After', () => {
  it('draws a full-jitter delay below the doubling ceiling, capped', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      for (let n = 0; n < 50; n++) {
        const delay = backoffDelay(attempt, { initialMs: 500, maxMs: 30_000 });
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(Math.min(30_000, 500 * 2 ** attempt));
      }
    }
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    const date = retryAfterMs(new Date(Date.now() + 10_000).toUTCString()) ?? 0;
    expect(date).toBeGreaterThan(8_000);
    expect(date).toBeLessThanOrEqual(10_000);
  });
});
