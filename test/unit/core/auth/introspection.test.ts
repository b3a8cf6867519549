/**
 * Opaque tokens through RFC 7662 introspection, against a real endpoint on 127.0.0.1 (test/support/
 * introspection-server.ts). The verifier's clock is a variable here, so cache lifetimes and the per-second call
 * budget are crossed by moving it; sockets and the 5 s deadline stay real.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAuthConfig } from '../../../../common/settings';
import {
  createTokenVerifier,
  InMemoryTokenReplayStore,
  type TokenVerifier,
} from '../../../../lambdas/core/auth';
import { NEGATIVE_CACHE_SECS } from '../../../../lambdas/core/auth/introspection';
import { ServiceError } from '../../../../lambdas/core/errors';
import {
  type IntrospectionServer,
  introspectionEnvFor,
  opaqueToken,
  serviceAnswer,
  startIntrospectionServer,
  TEST_INTROSPECTION_CLIENT_ID,
  TEST_INTROSPECTION_CLIENT_SECRET,
  userAnswer,
} from '../../../support/introspection-server';
import {
  authEnvFor,
  TEST_AUDIENCE,
  TEST_HS256_SECRET,
  TEST_ISSUER,
  TEST_SERVICE_AUDIENCE,
  userToken,
} from '../../../support/tokens';

let idp: IntrospectionServer;
let clock = Date.now();
const now = () => clock;
const nowSecs = () => Math.floor(clock / 1000);

beforeAll(async () => {
  idp = await startIntrospectionServer();
});
afterAll(() => idp?.stop());
afterEach(() => {
  idp.behave('normal');
  clock = Date.now();
});

/** A verifier with its own cache and call budget, trusting the HS256 test secret and the endpoint. */
const verifierWith = (
  settings: { cacheTtl?: string; callsPerSec?: number; env?: Record<string, string> } = {},
  deps: { replay?: boolean } = {},
): TokenVerifier =>
  createTokenVerifier(
    parseAuthConfig({
      ...authEnvFor(undefined),
      ...introspectionEnvFor(idp, settings),
      ...(deps.replay ? { SERVICE__AUTH__REPLAY_PROTECTION: 'all' } : {}),
      ...settings.env,
    }),
    { now, ...(deps.replay ? { tokenReplayStore: new InMemoryTokenReplayStore(() => nowSecs()) } : {}) },
  );

const failure = async (verifier: TokenVerifier, token: string): Promise<ServiceError> => {
  const error = await verifier.verify(token).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
};

const refusal = async (verifier: TokenVerifier, token: string): Promise<string> => {
  const error = await failure(verifier, token);
  expect(error.status).toBe(401);
  expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
  return error.message;
};

const outage = async (verifier: TokenVerifier, token: string): Promise<ServiceError> => {
  const error = await failure(verifier, token);
  expect(error.status).toBe(503);
  return error;
};

describe('token introspection (RFC 7662)', () => {
  it('asks with a form POST of the token and hint, authenticated with form-encoded HTTP Basic credentials', async () => {
    const token = idp.issue(userAnswer('alice'));
    const before = idp.requests.length;
    await verifierWith().verify(token);
    expect(idp.requests.slice(before)).toEqual([
      {
        method: 'POST',
        contentType: 'application/x-www-form-urlencoded',
        form: { token, token_type_hint: 'access_token' },
        client: { id: TEST_INTROSPECTION_CLIENT_ID, secret: TEST_INTROSPECTION_CLIENT_SECRET },
      },
    ]);
  });

  it('turns an active user answer into the user, with roles (top level or Hydra `ext`) and the skew on exp', async () => {
    const exp = nowSecs() + 600;
    const verifier = verifierWith();
    expect(await verifier.verify(idp.issue(userAnswer('alice', { exp, roles: ['admin'] })))).toEqual({
      kind: 'user',
      id: 'alice',
      roles: ['admin'],
      isAdmin: true,
      expiresAt: exp,
      acceptedUntil: exp + 30,
    });
    expect(
      await verifier.verify(idp.issue(userAnswer('bob', { ext: { roles: ['admin', 'ops'] } }))),
    ).toMatchObject({
      kind: 'user',
      id: 'bob',
      isAdmin: true,
    });
    expect(await verifier.verify(idp.issue(userAnswer('carol', { iss: undefined })))).toMatchObject({
      id: 'carol',
      isAdmin: false,
    });
  });

  it('turns a service-audience answer into the service named by client_id, with scopes from scope', async () => {
    expect(
      await verifierWith().verify(idp.issue(serviceAnswer('billing', 'events:publish notifications:write'))),
    ).toEqual({
      kind: 'service',
      id: 'billing',
      scopes: ['events:publish', 'notifications:write'],
      expiresAt: expect.any(Number),
    });
    expect(
      await refusal(verifierWith(), idp.issue(serviceAnswer('billing', '', { client_id: undefined }))),
    ).toBe('The token names no service');
  });

  it('refuses inactive, revoked and unknown tokens, and answers without a boolean active', async () => {
    const verifier = verifierWith();
    expect(await refusal(verifier, idp.issue({ active: false }))).toBe('The token is not active');
    expect(await refusal(verifier, opaqueToken())).toBe('The token is not active');
    const revoked = idp.issue(userAnswer('alice'));
    idp.revoke(revoked);
    expect(await refusal(verifier, revoked)).toBe('The token is not active');
    const { active: _, ...withoutActive } = userAnswer('alice');
    for (const malformed of [
      withoutActive,
      { ...userAnswer('alice'), active: 'true' },
      { ...userAnswer('alice'), active: 1 },
      { raw: '[true]' },
      { raw: 'null' },
    ]) {
      expect(await refusal(verifier, idp.issue(malformed)), JSON.stringify(malformed)).toBe(
        'The token is not active',
      );
    }
  });

  it('holds an active answer to the JWT rules: exp and nbf with skew, iss, aud, iat', async () => {
    const verifier = verifierWith();
    const refused = (extra: Record<string, unknown>) =>
      refusal(verifier, idp.issue(userAnswer('alice', extra)));
    expect(await refused({ exp: nowSecs() - 31 })).toBe('The token has expired');
    expect(await refused({ exp: undefined })).toBe('The token has no "exp" claim');
    expect(await refused({ exp: '2999999999' })).toBe('The token has no "exp" claim');
    expect(await refused({ nbf: nowSecs() + 31 })).toBe('The token is not valid yet');
    expect(await refused({ iat: nowSecs() + 31 })).toBe('The token was issued in the future');
    expect(await refused({ iss: 'https://other.idp' })).toBe('The token issuer is not accepted');
    expect(await refused({ aud: 'another-api' })).toBe('The token audience is not accepted');
    expect(await refused({ aud: undefined })).toBe('The token audience is not accepted');
    expect(await refused({ aud: [TEST_AUDIENCE, TEST_SERVICE_AUDIENCE] })).toBe(
      'The token audience is not accepted',
    );
    expect(await refused({ sub: undefined })).toBe('The token has no "sub" claim');
    // Within the skew either way, as for a JWT.
    expect(await verifier.verify(idp.issue(userAnswer('alice', { exp: nowSecs() - 20 })))).toMatchObject({
      id: 'alice',
    });
    expect(await verifier.verify(idp.issue(userAnswer('alice', { nbf: nowSecs() + 20 })))).toMatchObject({
      id: 'alice',
    });
  });

  it('refuses refresh tokens however the IdP marks them, and token types that are not bearer access tokens', async () => {
    const verifier = verifierWith();
    const refreshMessage = 'A refresh token grants no API access: present an access token';
    for (const mark of [
      { token_type: 'refresh_token' },
      { token_type: 'urn:ietf:params:oauth:token-type:refresh_token' },
      { token_use: 'refresh_token' }, // Ory Hydra
      { typ: 'Refresh' }, // Keycloak
      { typ: 'Offline' }, // Keycloak offline tokens
    ]) {
      expect(await refusal(verifier, idp.issue(userAnswer('alice', mark))), JSON.stringify(mark)).toBe(
        refreshMessage,
      );
    }
    expect(await refusal(verifier, idp.issue(userAnswer('alice', { token_type: 'DPoP' })))).toBe(
      'The token type is not accepted',
    );
    for (const type of [
      'bearer',
      'access_token',
      'urn:ietf:params:oauth:token-type:access_token',
      undefined,
    ]) {
      expect(await verifier.verify(idp.issue(userAnswer('alice', { token_type: type })))).toMatchObject({
        id: 'alice',
      });
    }
  });

  it('keeps JWTs local: a JWT, valid or not, never reaches the endpoint', async () => {
    const verifier = verifierWith();
    const before = idp.calls;
    expect(await verifier.verify(await userToken(TEST_HS256_SECRET, { sub: 'dana' }))).toMatchObject({
      id: 'dana',
    });
    expect(await refusal(verifier, await userToken('another-secret-of-at-least-32-bytes!!'))).toBe(
      'The token signature is invalid',
    );
    expect(idp.calls).toBe(before);
  });

  it('answers 503 (never 401, never a pass) when the endpoint is down, broken, slow or refuses our credentials', async () => {
    const token = idp.issue(userAnswer('alice'));
    idp.behave('down');
    expect((await outage(verifierWith(), token)).message).toBe(
      'The token could not be checked, try again later',
    );
    idp.behave('garbage');
    await outage(verifierWith(), token);
    idp.behave('normal');
    await outage(
      verifierWith({ env: { SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET: 'not-the-secret' } }),
      token,
    );
    // A failure is not cached: the next request asks again.
    const verifier = verifierWith();
    idp.behave('down');
    await outage(verifier, token);
    idp.behave('normal');
    expect(await verifier.verify(token)).toMatchObject({ id: 'alice' });
  });

  it('gives up on a slow endpoint at the 5 s deadline with a 503', async () => {
    idp.behave('slow', 8_000);
    await outage(verifierWith(), idp.issue(userAnswer('alice')));
  }, 15_000);

  it('stops reading an answer without a length once it is too large: a 503, not the whole body in memory', async () => {
    idp.behave('endless');
    await outage(verifierWith(), idp.issue(userAnswer('alice')));
    // What the client took before hanging up: the 64 KiB limit plus what socket buffers hold, far from the
    // hundreds of MiB a reader to the deadline takes in.
    expect(idp.endlessBytes).toBeLessThan(16 * 1024 * 1024);
  }, 15_000);

  it('gives up on an answer that drips in slower than the 5 s deadline with a 503', async () => {
    idp.behave('drip');
    await outage(verifierWith(), idp.issue(userAnswer('alice')));
  }, 15_000);

  it('caches an active answer by the token until the configured maximum, then asks again', async () => {
    const verifier = verifierWith({ cacheTtl: '60s' });
    const token = idp.issue(userAnswer('alice'));
    const before = idp.calls;
    for (let i = 0; i < 50; i += 1) await verifier.verify(token);
    expect(idp.calls - before).toBe(1);
    idp.revoke(token);
    clock += 59_000;
    expect(await verifier.verify(token)).toMatchObject({ id: 'alice' });
    expect(idp.calls - before).toBe(1);
    clock += 2_000;
    expect(await refusal(verifier, token)).toBe('The token is not active');
    expect(idp.calls - before).toBe(2);
  });

  it('caches an active answer no longer than the token lives', async () => {
    const verifier = verifierWith({ cacheTtl: '1h' });
    const token = idp.issue(userAnswer('alice', { exp: nowSecs() + 20 }));
    const before = idp.calls;
    await verifier.verify(token);
    clock += 19_000;
    await verifier.verify(token);
    expect(idp.calls - before).toBe(1);
    clock += 2_000;
    idp.revoke(token); // what the IdP says of an expired token
    expect(await refusal(verifier, token)).toBe('The token is not active');
    expect(idp.calls - before).toBe(2);
  });

  it('caches a refusal briefly', async () => {
    const verifier = verifierWith();
    const token = idp.issue({ active: false });
    const before = idp.calls;
    await refusal(verifier, token);
    await refusal(verifier, token);
    expect(idp.calls - before).toBe(1);
    idp.answer(token, userAnswer('alice'));
    clock += NEGATIVE_CACHE_SECS * 1000 + 1;
    expect(await verifier.verify(token)).toMatchObject({ id: 'alice' });
    expect(idp.calls - before).toBe(2);
  });

  it('makes a bounded number of calls for a flood of random tokens: the excess is 503 with Retry-After', async () => {
    const verifier = verifierWith({ callsPerSec: 5 });
    const known = idp.issue(userAnswer('alice'));
    await verifier.verify(known);
    const before = idp.calls;
    const results = await Promise.all(Array.from({ length: 100 }, () => failure(verifier, opaqueToken())));
    expect(idp.calls - before).toBe(4); // the budget of 5 per second, less the known user's call
    const excess = results.filter((error) => error.status === 503);
    expect(excess).toHaveLength(96);
    for (const error of excess) {
      expect(error.message).toBe('Too many new tokens to check right now, try again later');
      expect(error.headers).toEqual({ 'Retry-After': '1' });
    }
    // A token already checked is answered from the cache meanwhile; a second later the budget is back.
    expect(await verifier.verify(known)).toMatchObject({ id: 'alice' });
    clock += 1_000;
    await Promise.all(Array.from({ length: 20 }, () => failure(verifier, opaqueToken())));
    expect(idp.calls - before).toBe(9);
  });

  it('checks the same new token once when requests carrying it arrive together', async () => {
    const verifier = verifierWith();
    const token = idp.issue(userAnswer('alice'));
    const before = idp.calls;
    await Promise.all(Array.from({ length: 10 }, () => verifier.verify(token)));
    expect(idp.calls - before).toBe(1);
  });

  it('applies replay protection to opaque tokens by their jti', async () => {
    const verifier = verifierWith({}, { replay: true });
    const token = idp.issue(userAnswer('alice'));
    await verifier.verify(token);
    expect(await refusal(verifier, token)).toBe('The token has already been used');
    expect(await refusal(verifier, idp.issue(userAnswer('bob', { jti: undefined })))).toBe(
      'The token has no valid "jti" claim',
    );
  });

  it('never writes a token into a log line or an error', async () => {
    const written: string[] = [];
    const capture = (chunk: unknown) => {
      written.push(String(chunk));
      return true;
    };
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    const tokens: string[] = [];
    const errors: ServiceError[] = [];
    try {
      const verifier = verifierWith({ callsPerSec: 2 });
      for (const answer of [{ raw: '{"active":"yes"}' }, userAnswer('a', { token_type: 'refresh_token' })]) {
        const token = idp.issue(answer);
        tokens.push(token);
        errors.push(await failure(verifier, token));
      }
      for (const mode of ['down', 'garbage'] as const) {
        idp.behave(mode);
        const token = opaqueToken();
        tokens.push(token);
        errors.push(await failure(verifierWith(), token));
      }
      idp.behave('normal');
      const flooded = opaqueToken();
      tokens.push(flooded);
      errors.push(await failure(verifier, flooded));
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
    expect(errors.map((error) => error.status)).toEqual([401, 401, 503, 503, 503]);
    expect(written.join('')).toContain('token introspection');
    for (const token of tokens) {
      expect(written.join('')).not.toContain(token);
      for (const error of errors)
        expect(JSON.stringify({ ...error, message: error.message })).not.toContain(token);
    }
  });
});

describe('introspection settings', () => {
  const base = { SERVICE__AUTH__ISSUER: TEST_ISSUER };
  const url = 'https://idp.example.com/oauth2/introspect';

  it('lets introspection alone check tokens, with its defaults', () => {
    const config = parseAuthConfig({
      ...base,
      SERVICE__AUTH__INTROSPECTION_URL: url,
      SERVICE__AUTH__INTROSPECTION_CLIENT_ID: 'notify',
      SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET: 's3cret',
    });
    expect(config.introspection).toEqual({
      url,
      clientId: 'notify',
      clientSecret: 's3cret',
      cacheTtlSecs: 60,
      callsPerSec: 20,
    });
    expect(config.jwksUrl).toBeUndefined();
  });

  it('requires https (http only on loopback) and the client credentials, and never echoes the secret', () => {
    const invalid = () =>
      parseAuthConfig({
        ...base,
        SERVICE__AUTH__INTROSPECTION_URL: 'http://idp.example.com/introspect',
        SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET: 'do-not-print-me',
        SERVICE__AUTH__INTROSPECTION_CACHE_TTL: 'soon',
        SERVICE__AUTH__INTROSPECTION_CALLS_PER_SEC: '0',
      });
    expect(invalid).not.toThrow('do-not-print-me');
    expect(invalid).toThrow(
      'SERVICE__AUTH__INTROSPECTION_URL: expected an https:// URL (http:// only on loopback), got "http://idp.example.com/introspect"; ' +
        'SERVICE__AUTH__INTROSPECTION_CACHE_TTL: expected a duration like 300s or 5m, got "soon"; ' +
        'SERVICE__AUTH__INTROSPECTION_CALLS_PER_SEC: expected a whole number >= 1, got "0"',
    );
    expect(() => parseAuthConfig(base)).toThrow(
      'SERVICE__AUTH__JWKS_URL: set it (or SERVICE__AUTH__INTROSPECTION_URL, or SERVICE__AUTH__HS256_SECRET for local development): no way to check tokens',
    );
    expect(() => parseAuthConfig({ ...base, SERVICE__AUTH__INTROSPECTION_URL: url })).toThrow(
      'SERVICE__AUTH__INTROSPECTION_CLIENT_ID: is required with SERVICE__AUTH__INTROSPECTION_URL; ' +
        'SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET: is required with SERVICE__AUTH__INTROSPECTION_URL',
    );
    // Credentials in the address would sit in the template and fail every fetch: refused, and never echoed.
    for (const withCredentials of [
      'https://notify:do-not-print-me@idp.example.com/introspect',
      'http://notify:do-not-print-me@idp.example.com/introspect',
    ]) {
      const refused = () =>
        parseAuthConfig({
          ...base,
          SERVICE__AUTH__INTROSPECTION_URL: withCredentials,
          SERVICE__AUTH__INTROSPECTION_CLIENT_ID: 'notify',
          SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET: 's3cret',
        });
      expect(refused).toThrow(
        'SERVICE__AUTH__INTROSPECTION_URL: expected an https:// URL without credentials in it',
      );
      expect(refused).not.toThrow('do-not-print-me');
    }
    // A deployed stage reads the secret from Secrets Manager after this check.
    expect(
      parseAuthConfig(
        { ...base, SERVICE__AUTH__INTROSPECTION_URL: url, SERVICE__AUTH__INTROSPECTION_CLIENT_ID: 'notify' },
        { introspectionSecretElsewhere: true },
      ).introspection?.clientSecret,
    ).toBeUndefined();
  });
});
