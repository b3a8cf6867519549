import {
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import type { AuthConfig } from '../../../common/settings';
import { ServiceError, unauthorized, unavailable } from '../errors';
import { IDENTIFIER_CHARACTERS } from '../identifiers';
import type { Principal } from '../principal';
import { audiencesOf, principalFor, stringsOf } from './claims';
import { createIntrospector } from './introspection';
import { boundedJwksFetch, refusingWeakKeys } from './jwks-limits';
import type { TokenReplayStore } from './token-replay-store';

/** Validates bearer tokens (docs/contract.md §2) and turns them into principals. */
export interface TokenVerifier {
  /**
   * Resolves the token's principal; throws `unauthorized` (401), or `unavailable` (503) when the key set, the
   * introspection endpoint or the replay store is down (or too many new opaque tokens arrive: introspection.ts).
   */
  verify(token: string): Promise<Principal>;
}

export interface TokenVerifierDeps {
  /** Required unless `config.replayProtection` is `off`. */
  readonly tokenReplayStore?: TokenReplayStore;
  /** Current time in epoch milliseconds, for `exp`/`nbf` checks. */
  readonly now?: () => number;
}

/** After a key set fetch, an unknown `kid` triggers no further fetch for this long (contract §2: 30 s). */
export const JWKS_COOLDOWN_MS = 30_000;
/** A JWKS fetch that takes longer fails the request with 503. */
const JWKS_TIMEOUT_MS = 5_000;
/** Far above any real access token; refuses absurd input before any parsing. */
const MAX_TOKEN_LENGTH = 16 * 1024;
/** Bounded so a jti fits a DynamoDB key with room to spare. */
const MAX_JTI_LENGTH = IDENTIFIER_CHARACTERS.jti;

const ASYMMETRIC_ALGS = ['RS256', 'ES256'] as const;

/** Maps a jose failure to a client message that says what is wrong without echoing keys or internals. */
const tokenVerificationError = (error: unknown): ServiceError => {
  if (error instanceof ServiceError) return error;
  if (error instanceof errors.JWTExpired) return unauthorized('The token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return unauthorized('The token is not valid yet');
    if (error.claim === 'iss') return unauthorized('The token issuer is not accepted');
    if (error.claim === 'aud') return unauthorized('The token audience is not accepted');
    if (error.reason === 'missing') return unauthorized(`The token has no "${error.claim}" claim`);
    return unauthorized(`The token's "${error.claim}" claim is invalid`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return unauthorized('The token signing algorithm is not accepted');
  if (error instanceof errors.JWKSNoMatchingKey)
    return unauthorized('The token was signed with an unknown key');
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return unauthorized('The token signature is invalid');
  if (error instanceof errors.JWKSMultipleMatchingKeys) return unauthorized('The token key id is ambiguous');
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  )
    return unauthorized('The token is malformed');
  // Anything else is the key set being unreachable or broken (timeout, non-200, not JSON): not the caller's fault.
  return unavailable('The token could not be checked, try again later');
};

export const createTokenVerifier = (config: AuthConfig, deps: TokenVerifierDeps = {}): TokenVerifier => {
  const now = deps.now ?? (() => Date.now());
  if (config.replayProtection !== 'off' && !deps.tokenReplayStore) {
    throw new Error('replay protection is on but no replay store was given');
  }
  const remoteKeys = config.jwksUrl
    ? refusingWeakKeys(
        createRemoteJWKSet(new URL(config.jwksUrl), {
          cacheMaxAge: config.jwksCacheTtlSecs * 1000,
          cooldownDuration: JWKS_COOLDOWN_MS,
          timeoutDuration: JWKS_TIMEOUT_MS,
          [customFetch]: boundedJwksFetch,
        }),
      )
    : undefined;
  const secretKey = config.hs256Secret ? new TextEncoder().encode(config.hs256Secret) : undefined;
  const algorithms = [...(remoteKeys ? ASYMMETRIC_ALGS : []), ...(secretKey ? ['HS256'] : [])];

  // The key follows from the (already allow-listed) alg: an HS256 token is only ever checked against the
  // configured secret, never against a public key of the set, which closes the classic algorithm confusion.
  const keyFor: JWTVerifyGetKey = async (header, token) => {
    if (header.alg === 'HS256' && secretKey) return secretKey;
    if ((header.alg === 'RS256' || header.alg === 'ES256') && remoteKeys) return remoteKeys(header, token);
    throw new errors.JOSEAlgNotAllowed('unexpected "alg"');
  };

  const principalOf = (payload: JWTPayload): Principal => {
    const subject = payload.sub as string;
    return principalFor(config, {
      audiences: audiencesOf(payload.aud),
      userId: subject,
      serviceId: typeof payload.service === 'string' && payload.service !== '' ? payload.service : subject,
      roles: stringsOf(payload.roles),
      scopes: [
        ...new Set([...stringsOf(payload.scope), ...stringsOf(payload.scp), ...stringsOf(payload.roles)]),
      ],
      expiresAt: payload.exp as number,
    });
  };

  const checkReplay = async (jti: unknown, expiresAt: number, principal: Principal): Promise<void> => {
    const singleUse =
      config.replayProtection === 'all' ||
      (config.replayProtection === 'service' && principal.kind === 'service');
    if (!singleUse || !deps.tokenReplayStore) return;
    if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI_LENGTH) {
      throw unauthorized('The token has no valid "jti" claim');
    }
    // Kept until the token can no longer pass the exp check, skew included.
    const keepUntil = expiresAt + config.clockSkewSecs;
    let first: boolean;
    try {
      first = await deps.tokenReplayStore.firstUse(jti, keepUntil);
    } catch {
      throw unavailable('The token could not be checked, try again later');
    }
    if (!first) throw unauthorized('The token has already been used');
  };

  const { introspection } = config;
  if (introspection && introspection.clientSecret === undefined) {
    throw new Error('token introspection is configured but its client secret was not given');
  }
  // Only tokens that are not JWTs go there: a JWT is always checked here, against the configured keys.
  const introspect = introspection?.clientSecret
    ? createIntrospector(config, { ...introspection, clientSecret: introspection.clientSecret }, now)
    : undefined;

  const verifyOpaque = async (token: string): Promise<Principal> => {
    if (!introspect) throw unauthorized('The token is malformed');
    const { principal, jti, expiresAt } = await introspect(token);
    await checkReplay(jti, expiresAt, principal);
    return principal;
  };

  return {
    async verify(token: string): Promise<Principal> {
      if (typeof token !== 'string' || token === '' || token.length > MAX_TOKEN_LENGTH) {
        throw unauthorized('The token is malformed');
      }
      try {
        let alg: unknown;
        try {
          alg = decodeProtectedHeader(token).alg;
        } catch {
          return await verifyOpaque(token);
        }
        if (typeof alg !== 'string') throw unauthorized('The token is malformed');
        if (alg.toLowerCase() === 'none') throw unauthorized('Unsigned tokens are not accepted');
        if (!algorithms.includes(alg)) throw unauthorized('The token signing algorithm is not accepted');
        const { payload } = await jwtVerify(token, keyFor, {
          algorithms,
          issuer: config.issuer,
          audience: [config.audience, config.serviceAudience],
          clockTolerance: config.clockSkewSecs,
          currentDate: new Date(now()),
          requiredClaims: ['sub', 'exp'],
        });
        if (typeof payload.sub !== 'string' || payload.sub === '')
          throw unauthorized('The token has no "sub" claim');
        // jose checks iat's type only; a token "issued" later than now (beyond skew) is forged or from a bad clock.
        if (typeof payload.iat === 'number' && payload.iat > now() / 1000 + config.clockSkewSecs)
          throw unauthorized('The token was issued in the future');
        const principal = principalOf(payload);
        await checkReplay(payload.jti, payload.exp as number, principal);
        return principal;
      } catch (error) {
        throw tokenVerificationError(error);
      }
    },
  };
};
