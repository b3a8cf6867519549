/**
 * Minting test tokens the way an IdP would.
 *
 *   const idp = await startJwksServer();
 *   process.env = { ...process.env, ...authEnvFor(idp) };          // or pass authEnvFor(idp) to the local runtime
 *   const alice = await userToken(idp.key('RS256'), { sub: 'alice', roles: ['admin'] });
 *   const billing = await serviceToken(idp.key('ES256'), { service: 'billing', scope: 'events:publish' });
 *   const dev = await userToken(TEST_HS256_SECRET, { sub: 'bob' });  // HS256 when the secret is configured
 *
 * Every claim can be overridden or removed (`{ exp: undefined }` drops it); `header` overrides the JWS header
 * (e.g. `{ kid: 'unknown' }`).
 */
import { randomUUID } from 'node:crypto';
import { base64url, type JWTPayload, SignJWT } from 'jose';
import type { JwksServer, SigningKey } from './jwks-server';

export const TEST_ISSUER = 'https://idp.test.local';
export const TEST_AUDIENCE = 'notify';
export const TEST_SERVICE_AUDIENCE = 'notify.s2s';
/** 32+ bytes, as the settings require. */
export const TEST_HS256_SECRET = 'test-only-hs256-secret-0123456789abcdef';

/** A signing key of the JWKS server, or an HS256 shared secret. */
export type Signer = SigningKey | string;

export interface MintOptions {
  /** Seconds from now until `exp`; default 300. */
  readonly expiresInSecs?: number;
  /** Overrides the JWS protected header (e.g. `kid`, `alg`). */
  readonly header?: Record<string, unknown>;
  /** "Now" for `iat`/`exp`, in epoch milliseconds; default Date.now(). */
  readonly nowMs?: number;
}

/** Claims: anything of a JWT payload; a key set to `undefined` removes that claim. */
export type Claims = Record<string, unknown>;

const withoutUndefined = (claims: Claims): JWTPayload =>
  Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined)) as JWTPayload;

/** Signs `claims` as given (no defaults added). */
export const signToken = async (
  signer: Signer,
  claims: Claims,
  options: MintOptions = {},
): Promise<string> => {
  const header =
    typeof signer === 'string'
      ? { alg: 'HS256', typ: 'JWT' }
      : { alg: signer.alg, kid: signer.kid, typ: 'JWT' };
  const key = typeof signer === 'string' ? new TextEncoder().encode(signer) : signer.privateKey;
  return new SignJWT(withoutUndefined(claims)).setProtectedHeader({ ...header, ...options.header }).sign(key);
};

const baseClaims = (audience: string, options: MintOptions): Claims => {
  const now = Math.floor((options.nowMs ?? Date.now()) / 1000);
  return {
    iss: TEST_ISSUER,
    aud: audience,
    iat: now,
    exp: now + (options.expiresInSecs ?? 300),
    jti: randomUUID(),
  };
};

/** A user access token: `aud` = `notify`, `sub` default `user-1`, optional `roles`. */
export const userToken = (signer: Signer, claims: Claims = {}, options: MintOptions = {}): Promise<string> =>
  signToken(signer, { ...baseClaims(TEST_AUDIENCE, options), sub: 'user-1', ...claims }, options);

/** A service token: `aud` = `notify.s2s`, `sub` default `svc-test`, `scope` as given. */
export const serviceToken = (
  signer: Signer,
  claims: Claims = {},
  options: MintOptions = {},
): Promise<string> =>
  signToken(signer, { ...baseClaims(TEST_SERVICE_AUDIENCE, options), sub: 'svc-test', ...claims }, options);

/** An `alg: none` token (no signature), which every verifier must refuse. */
export const unsignedToken = (claims: Claims): string => {
  const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(withoutUndefined(claims))}.`;
};

/** Valid-looking claims of a user token, for building unsigned or otherwise forged tokens. */
export const userClaims = (claims: Claims = {}, options: MintOptions = {}): Claims => ({
  ...baseClaims(TEST_AUDIENCE, options),
  sub: 'user-1',
  ...claims,
});

/**
 * SERVICE__AUTH__* settings that trust `idp` (and, with `hs256`, the test HS256 secret too), for tests
 * that configure a process or the local runtime through its environment.
 */
export const authEnvFor = (
  idp: Pick<JwksServer, 'jwksUrl'> | undefined,
  extra: { hs256?: boolean; replayProtection?: 'service' | 'all'; jwksCacheTtl?: string } = {},
): Record<string, string> => ({
  SERVICE__AUTH__ISSUER: TEST_ISSUER,
  SERVICE__AUTH__AUDIENCE: TEST_AUDIENCE,
  SERVICE__AUTH__SERVICE_AUDIENCE: TEST_SERVICE_AUDIENCE,
  ...(idp ? { SERVICE__AUTH__JWKS_URL: idp.jwksUrl } : {}),
  ...(extra.hs256 || !idp ? { SERVICE__AUTH__HS256_SECRET: TEST_HS256_SECRET } : {}),
  ...(extra.replayProtection ? { SERVICE__AUTH__REPLAY_PROTECTION: extra.replayProtection } : {}),
  ...(extra.jwksCacheTtl ? { SERVICE__AUTH__JWKS_CACHE_TTL: extra.jwksCacheTtl } : {}),
});

/** A user principal as the verifier returns it for a valid token (an hour left), for domain-level tests. */
export const userPrincipal = (id: string) => {
  const nowSecs = Math.floor(Date.now() / 1000);
  return {
    kind: 'user' as const,
    id,
    roles: [],
    isAdmin: false,
    expiresAt: nowSecs + 3600,
    acceptedUntil: nowSecs + 3630,
  };
};
