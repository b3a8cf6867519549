import { createHmac } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CompactSign, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAuthConfig } from '../../../../common/settings';
import {
  createTokenVerifier,
  DynamoDbTokenReplayStore,
  InMemoryTokenReplayStore,
  type TokenVerifier,
} from '../../../../lambdas/core/auth';
import { ServiceError } from '../../../../lambdas/core/errors';
import type { Principal } from '../../../../lambdas/core/principal';
import { generateSigningKey, type JwksServer, startJwksServer } from '../../../support/jwks-server';
import {
  authEnvFor,
  serviceToken,
  signToken,
  TEST_AUDIENCE,
  TEST_HS256_SECRET,
  TEST_SERVICE_AUDIENCE,
  unsignedToken,
  userClaims,
  userToken,
} from '../../../support/tokens';

/** The 401 the verifier throws, with its client message. */
const rejection = async (verifier: TokenVerifier, token: string): Promise<ServiceError> => {
  const error = await verifier.verify(token).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ServiceError);
  const serviceError = error as ServiceError;
  expect(serviceError.status).toBe(401);
  expect(serviceError.headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
  return serviceError;
};

const nowSecs = () => Math.floor(Date.now() / 1000);

/** An HS256 token signed with the test secret, header and claims exactly as given (jose would vet the header). */
const hs256Token = (header: Record<string, unknown>, claims: Record<string, unknown>): string => {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode(header)}.${encode(claims)}`;
  return `${input}.${createHmac('sha256', TEST_HS256_SECRET).update(input).digest('base64url')}`;
};

describe('token verifier', () => {
  let idp: JwksServer;
  let jwksOnly: TokenVerifier;
  let withSecret: TokenVerifier;

  beforeAll(async () => {
    idp = await startJwksServer();
    jwksOnly = createTokenVerifier(parseAuthConfig(authEnvFor(idp)));
    withSecret = createTokenVerifier(parseAuthConfig(authEnvFor(idp, { hs256: true })));
  });
  afterAll(async () => {
    await idp.stop();
  });

  it('accepts an RS256 user token and an ES256 service token from the key set', async () => {
    const user = await jwksOnly.verify(await userToken(idp.key('RS256'), { sub: 'alice' }));
    const service = await jwksOnly.verify(await serviceToken(idp.key('ES256'), { sub: 'billing' }));
    expect(user).toMatchObject({ kind: 'user', id: 'alice' });
    expect(service).toMatchObject({ kind: 'service', id: 'billing' });
  });

  it('rejects alg none', async () => {
    const error = await rejection(jwksOnly, unsignedToken(userClaims()));
    expect(error.message).toBe('Unsigned tokens are not accepted');
    await rejection(withSecret, unsignedToken(userClaims()));
  });

  it('rejects an HS256 token when only the key set is configured (algorithm confusion)', async () => {
    const error = await rejection(jwksOnly, await userToken(TEST_HS256_SECRET));
    expect(error.message).toBe('The token signing algorithm is not accepted');
  });

  it('rejects an HS256 token signed with a public key of the set even when HS256 is on', async () => {
    // The classic confusion attack: HMAC keyed with the (public) RSA key's bytes.
    const publicKeyAsSecret = JSON.stringify(idp.key('RS256').publicJwk);
    const error = await rejection(withSecret, await userToken(publicKeyAsSecret));
    expect(error.message).toBe('The token signature is invalid');
  });

  it('rejects an algorithm outside RS256/ES256/HS256', async () => {
    const { privateKey } = await generateKeyPair('PS256');
    const token = await new SignJWT(userClaims())
      .setProtectedHeader({ alg: 'PS256', kid: idp.key('RS256').kid })
      .sign(privateKey);
    const error = await rejection(withSecret, token);
    expect(error.message).toBe('The token signing algorithm is not accepted');
  });

  it('accepts HS256 when the secret is configured', async () => {
    const principal = await withSecret.verify(await userToken(TEST_HS256_SECRET, { sub: 'dev-user' }));
    expect(principal).toMatchObject({ kind: 'user', id: 'dev-user' });
  });

  it('rejects an HS256 token signed with another secret', async () => {
    const error = await rejection(withSecret, await userToken('another-secret-of-thirty-two-bytes-or-more'));
    expect(error.message).toBe('The token signature is invalid');
  });

  it('rejects a token signed by a key that is not in the set', async () => {
    const stranger = await generateSigningKey('RS256', idp.key('RS256').kid);
    const error = await rejection(jwksOnly, await userToken(stranger));
    expect(error.message).toBe('The token signature is invalid');
  });

  it('rejects a wrong issuer', async () => {
    const error = await rejection(jwksOnly, await userToken(idp.key(), { iss: 'https://evil.example' }));
    expect(error.message).toBe('The token issuer is not accepted');
  });

  it('rejects an audience that is neither the user nor the service audience', async () => {
    const error = await rejection(jwksOnly, await userToken(idp.key(), { aud: 'another-api' }));
    expect(error.message).toBe('The token audience is not accepted');
  });

  it('rejects a token minted for both audiences', async () => {
    const token = await userToken(idp.key(), { aud: [TEST_AUDIENCE, TEST_SERVICE_AUDIENCE] });
    expect((await rejection(jwksOnly, token)).message).toBe('The token audience is not accepted');
  });

  it('derives the principal kind from the audience: user audience → user, service audience → service', async () => {
    const claims = { sub: 'same-subject', roles: ['events:publish'] };
    const asUser = await jwksOnly.verify(
      await signToken(idp.key(), userClaims({ ...claims, aud: TEST_AUDIENCE })),
    );
    const asService = await jwksOnly.verify(
      await signToken(idp.key(), userClaims({ ...claims, aud: ['other', TEST_SERVICE_AUDIENCE] })),
    );
    expect(asUser.kind).toBe('user');
    expect(asService.kind).toBe('service');
  });

  it('requires sub', async () => {
    const error = await rejection(jwksOnly, await userToken(idp.key(), { sub: undefined }));
    expect(error.message).toBe('The token has no "sub" claim');
  });

  it('requires exp', async () => {
    const error = await rejection(jwksOnly, await userToken(idp.key(), { exp: undefined }));
    expect(error.message).toBe('The token has no "exp" claim');
  });

  it('rejects an expired token (beyond the clock skew)', async () => {
    const token = await userToken(idp.key(), { exp: nowSecs() - 31 });
    expect((await rejection(jwksOnly, token)).message).toBe('The token has expired');
  });

  it('rejects a token whose nbf is beyond the clock skew', async () => {
    const token = await userToken(idp.key(), { nbf: nowSecs() + 40 });
    expect((await rejection(jwksOnly, token)).message).toBe('The token is not valid yet');
  });

  it('rejects a token issued (iat) beyond the clock skew in the future, and accepts one within it', async () => {
    const future = await userToken(idp.key(), { iat: nowSecs() + 3600, exp: nowSecs() + 7200 });
    expect((await rejection(jwksOnly, future)).message).toBe('The token was issued in the future');
    const skewed = await userToken(idp.key(), { iat: nowSecs() + 25 });
    await expect(jwksOnly.verify(skewed)).resolves.toMatchObject({ kind: 'user' });
  });

  it('accepts exp and nbf within the clock skew', async () => {
    const recentlyExpired = await userToken(idp.key(), { exp: nowSecs() - 25 });
    const almostValid = await userToken(idp.key(), { nbf: nowSecs() + 25 });
    await expect(jwksOnly.verify(recentlyExpired)).resolves.toMatchObject({ kind: 'user' });
    await expect(jwksOnly.verify(almostValid)).resolves.toMatchObject({ kind: 'user' });
  });

  it('checks exp against the injected clock', async () => {
    const token = await userToken(idp.key(), {}, { expiresInSecs: 60 });
    const later = createTokenVerifier(parseAuthConfig(authEnvFor(idp)), { now: () => Date.now() + 120_000 });
    expect((await rejection(later, token)).message).toBe('The token has expired');
  });

  it('rejects malformed tokens without parsing further', async () => {
    for (const garbage of ['', 'abc', 'a.b.c', 'x'.repeat(20_000)]) {
      expect((await rejection(jwksOnly, garbage)).message).toBe('The token is malformed');
    }
  });

  it('rejects a missing or non-string token (a JavaScript caller) with 401, not a crash', async () => {
    for (const missing of [undefined, null, 42]) {
      expect((await rejection(jwksOnly, missing as unknown as string)).message).toBe(
        'The token is malformed',
      );
    }
  });

  it('rejects a token whose kid is not in the set', async () => {
    const stranger = await generateSigningKey('ES256', 'kid-nobody-published');
    expect((await rejection(jwksOnly, await userToken(stranger))).message).toBe(
      'The token was signed with an unknown key',
    );
  });

  it('accepts RS256, ES256 and HS256 tokens alike when both the key set and the secret are configured', async () => {
    for (const signer of [idp.key('RS256'), idp.key('ES256'), TEST_HS256_SECRET]) {
      await expect(withSecret.verify(await userToken(signer, { sub: 'carol' }))).resolves.toMatchObject({
        kind: 'user',
        id: 'carol',
      });
    }
  });

  describe('user principal', () => {
    it('is admin when roles contain the admin role', async () => {
      const admin = await jwksOnly.verify(
        await userToken(idp.key(), { sub: 'root', roles: ['staff', 'admin'] }),
      );
      const staff = await jwksOnly.verify(await userToken(idp.key(), { sub: 'bob', roles: ['staff'] }));
      expect(admin).toMatchObject({ kind: 'user', id: 'root', roles: ['staff', 'admin'], isAdmin: true });
      expect(staff).toMatchObject({ kind: 'user', isAdmin: false });
    });

    it('uses the configured admin role name', async () => {
      const verifier = createTokenVerifier(
        parseAuthConfig({ ...authEnvFor(idp), SERVICE__AUTH__ADMIN_ROLE: 'notify-operator' }),
      );
      const operator = await verifier.verify(await userToken(idp.key(), { roles: ['notify-operator'] }));
      const admin = await verifier.verify(await userToken(idp.key(), { roles: ['admin'] }));
      expect(operator).toMatchObject({ isAdmin: true });
      expect(admin).toMatchObject({ isAdmin: false });
    });

    it('carries expiresAt from exp, and acceptedUntil with the clock skew', async () => {
      const exp = nowSecs() + 100;
      expect(await jwksOnly.verify(await userToken(idp.key(), { exp }))).toMatchObject({
        expiresAt: exp,
        acceptedUntil: exp + 30,
      });
    });
  });

  describe('service principal', () => {
    const scopesOf = (principal: Principal) => (principal.kind === 'service' ? principal.scopes : undefined);

    it('is named by the service claim, else sub', async () => {
      const named = await jwksOnly.verify(
        await serviceToken(idp.key(), { service: 'billing', sub: 'client-42' }),
      );
      const bySub = await jwksOnly.verify(await serviceToken(idp.key(), { sub: 'client-42' }));
      expect(named).toMatchObject({ kind: 'service', id: 'billing' });
      expect(bySub).toMatchObject({ kind: 'service', id: 'client-42' });
    });

    it('reads scopes from a space-separated scope string', async () => {
      const principal = await jwksOnly.verify(
        await serviceToken(idp.key(), { scope: 'events:publish  notifications:write' }),
      );
      expect(scopesOf(principal)).toEqual(['events:publish', 'notifications:write']);
    });

    it('reads scopes from scp (array or string) and roles arrays', async () => {
      const scpArray = await jwksOnly.verify(await serviceToken(idp.key(), { scp: ['webhooks:admin'] }));
      const scpString = await jwksOnly.verify(
        await serviceToken(idp.key(), { scp: 'broadcast:write events:publish' }),
      );
      const roles = await jwksOnly.verify(await serviceToken(idp.key(), { roles: ['notifications:write'] }));
      expect(scopesOf(scpArray)).toEqual(['webhooks:admin']);
      expect(scopesOf(scpString)).toEqual(['broadcast:write', 'events:publish']);
      expect(scopesOf(roles)).toEqual(['notifications:write']);
    });

    it('lacks a scope the token does not carry', async () => {
      const principal = await jwksOnly.verify(await serviceToken(idp.key(), { scope: 'events:publish' }));
      expect(scopesOf(principal)).not.toContain('webhooks:admin');
      const bare = await jwksOnly.verify(await serviceToken(idp.key(), {}));
      expect(scopesOf(bare)).toEqual([]);
    });
  });

  describe('claims of the wrong shape', () => {
    it.each([
      ['an empty sub', { sub: '' }],
      ['a numeric sub', { sub: 42 }],
    ])('refuses %s as no sub', async (_what, claims) => {
      const error = await rejection(jwksOnly, await userToken(idp.key(), claims));
      expect(error.message).toBe('The token has no "sub" claim');
    });

    it('refuses a non-numeric exp as an invalid claim', async () => {
      const error = await rejection(jwksOnly, await userToken(idp.key(), { exp: 'tomorrow' }));
      expect(error.message).toBe('The token\'s "exp" claim is invalid');
    });

    it('refuses a signed token whose payload is not a JSON object as malformed (401, not 503)', async () => {
      const key = idp.key();
      const token = await new CompactSign(new TextEncoder().encode('not json at all'))
        .setProtectedHeader({ alg: key.alg, kid: key.kid })
        .sign(key.privateKey);
      expect((await rejection(jwksOnly, token)).message).toBe('The token is malformed');
    });

    it('refuses a token with a critical header extension it does not know as malformed', async () => {
      const token = hs256Token({ alg: 'HS256', crit: ['x-unknown'], 'x-unknown': 1 }, userClaims());
      expect((await rejection(withSecret, token)).message).toBe('The token is malformed');
    });

    it('refuses a non-string alg as malformed and alg none in any case as unsigned', async () => {
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const withAlg = (alg: unknown) => `${encode({ alg, typ: 'JWT' })}.${encode(userClaims())}.c2ln`;
      expect((await rejection(withSecret, withAlg(256))).message).toBe('The token is malformed');
      expect((await rejection(withSecret, withAlg(['HS256']))).message).toBe('The token is malformed');
      expect((await rejection(withSecret, withAlg('NoNe'))).message).toBe('Unsigned tokens are not accepted');
    });

    it('keeps only the non-empty string entries of roles and scopes', async () => {
      const user = await jwksOnly.verify(
        await userToken(idp.key(), { roles: ['staff', 7, '', null, { admin: true }, 'admin'] }),
      );
      expect(user).toMatchObject({ roles: ['staff', 'admin'], isAdmin: true });
      const numericRoles = await jwksOnly.verify(await userToken(idp.key(), { roles: 5 }));
      expect(numericRoles).toMatchObject({ roles: [], isAdmin: false });
      const service = await jwksOnly.verify(
        await serviceToken(idp.key(), { scope: ' events:publish ', scp: [1, 'webhooks:admin', ''] }),
      );
      expect(service).toMatchObject({ scopes: ['events:publish', 'webhooks:admin'] });
    });

    it('names a service by sub when its service claim is empty or not a string', async () => {
      for (const service of ['', 12]) {
        const principal = await jwksOnly.verify(await serviceToken(idp.key(), { service, sub: 'client-7' }));
        expect(principal).toMatchObject({ kind: 'service', id: 'client-7' });
      }
    });

    it('accepts a token of exactly 16 KiB and refuses one a character longer', async () => {
      // A token of `length` characters: a padding claim fills the payload, a kid pads the header by 0–3
      // characters (base64url cannot end on every length).
      const sized = (length: number): string => {
        for (const kid of ['', 'k', 'kk', 'kkk']) {
          const header = { alg: 'HS256', typ: 'JWT', kid };
          const bare = hs256Token(header, userClaims({ pad: '' }));
          const token = hs256Token(header, userClaims({ pad: 'p'.repeat(((length - bare.length) * 3) / 4) }));
          if (token.length === length) return token;
        }
        throw new Error(`no token of ${length} characters`);
      };
      await expect(withSecret.verify(sized(16 * 1024))).resolves.toMatchObject({ kind: 'user' });
      expect((await rejection(withSecret, sized(16 * 1024 + 1))).message).toBe('The token is malformed');
    });

    it('accepts iat exactly at the clock skew ahead and refuses a second more', async () => {
      const nowMs = Math.floor(Date.now() / 1000) * 1000;
      const verifier = createTokenVerifier(parseAuthConfig(authEnvFor(idp)), { now: () => nowMs });
      const iat = nowMs / 1000 + 30;
      await expect(verifier.verify(await userToken(idp.key(), { iat }, { nowMs }))).resolves.toMatchObject({
        kind: 'user',
      });
      const ahead = await userToken(idp.key(), { iat: iat + 1 }, { nowMs });
      expect((await rejection(verifier, ahead)).message).toBe('The token was issued in the future');
    });
  });

  describe('single-use tokens', () => {
    const singleUse = (now: () => number, scope: 'all' | 'service' = 'all') =>
      createTokenVerifier(parseAuthConfig(authEnvFor(idp, { replayProtection: scope })), {
        now,
        tokenReplayStore: new InMemoryTokenReplayStore(() => Math.floor(now() / 1000)),
      });

    it('refuses an empty jti and one over 256 characters, and accepts 256', async () => {
      const verifier = singleUse(() => Date.now());
      for (const jti of ['', 'j'.repeat(257), 42]) {
        const error = await rejection(verifier, await userToken(idp.key(), { jti }));
        expect(error.message).toBe('The token has no valid "jti" claim');
      }
      await expect(
        verifier.verify(await userToken(idp.key(), { jti: 'j'.repeat(256) })),
      ).resolves.toMatchObject({
        kind: 'user',
      });
    });

    it('remembers a jti until the token expires for good (exp plus the clock skew)', async () => {
      let nowMs = Date.now();
      const verifier = singleUse(() => nowMs);
      const token = await userToken(idp.key(), {}, { expiresInSecs: 10, nowMs });
      await verifier.verify(token);
      nowMs += 35_000; // past exp, within the skew: the token still passes the exp check, so it must stay spent
      expect((await rejection(verifier, token)).message).toBe('The token has already been used');
    });

    it('refuses a reused service token with service-only replay protection (401, "already been used")', async () => {
      const verifier = singleUse(() => Date.now(), 'service');
      const service = await serviceToken(idp.key());
      await expect(verifier.verify(service)).resolves.toMatchObject({ kind: 'service' });
      const error = await rejection(verifier, service);
      expect(error).toMatchObject({ status: 401, message: 'The token has already been used' });
    });

    it('lets user tokens be reused with service-only replay protection', async () => {
      const verifier = singleUse(() => Date.now(), 'service');
      const user = await userToken(idp.key());
      await verifier.verify(user);
      await expect(verifier.verify(user)).resolves.toMatchObject({ kind: 'user' });
    });

    it('answers 503 when the replay store cannot answer, and does not accept the token', async () => {
      const verifier = createTokenVerifier(parseAuthConfig(authEnvFor(idp, { replayProtection: 'all' })), {
        // The store's DynamoDB endpoint is a port nobody listens on: the outage as a Lambda would meet it.
        tokenReplayStore: new DynamoDbTokenReplayStore(
          'tokenReplay',
          DynamoDBDocumentClient.from(
            new DynamoDBClient({
              endpoint: 'http://127.0.0.1:1',
              region: 'us-east-1',
              credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
              maxAttempts: 1,
            }),
          ),
        ),
      });
      const error = await verifier.verify(await userToken(idp.key())).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ServiceError);
      expect(error).toMatchObject({
        status: 503,
        message: 'The token could not be checked, try again later',
      });
    });

    it('lets every token be reused when replay protection is off, even with a store at hand', async () => {
      const verifier = createTokenVerifier(parseAuthConfig(authEnvFor(idp)), {
        tokenReplayStore: new InMemoryTokenReplayStore(),
      });
      const service = await serviceToken(idp.key());
      await verifier.verify(service);
      await expect(verifier.verify(service)).resolves.toMatchObject({ kind: 'service' });
    });

    it('refuses to start with replay protection on and no store', () => {
      expect(() =>
        createTokenVerifier(parseAuthConfig(authEnvFor(idp, { replayProtection: 'service' }))),
      ).toThrow('replay protection is on but no replay store was given');
    });
  });
});
