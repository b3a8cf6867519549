/**
 * Opaque tokens checked at the IdP's OAuth 2.0 Token Introspection endpoint (RFC 7662): one form POST per token
 * the process has not seen, answers cached by the token's SHA-256, and a per-process budget of calls so that a
 * flood of made-up tokens cannot fan out to the IdP. Rules and settings: docs/auth.md, "Opaque tokens".
 */
import { createHash } from 'node:crypto';
import type { AuthConfig, IntrospectionConfig } from '../../../common/settings';
import { ServiceError, unauthorized, unavailable } from '../errors';
import { logger } from '../logger';
import LruCache from '../lru-cache';
import type { Principal } from '../principal';
import { bodyWithin } from './bounded-body';
import { audiencesOf, principalFor, stringsOf } from './claims';

/** An introspection call that takes longer fails the request with 503: the JWKS fetch's deadline. */
export const INTROSPECTION_TIMEOUT_MS = 5_000;
/** How long a refused token (inactive, expired, wrong audience, a refresh token) is answered from memory. */
export const NEGATIVE_CACHE_SECS = 10;
/** Answers kept per process; the least recently used go first. */
const CACHE_ENTRIES = 10_000;
/** Far above any RFC 7662 answer; a larger body is the endpoint misbehaving. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** `token_type`, `token_use` (Ory Hydra) or `typ` (Keycloak) values that mark a refresh token. */
const REFRESH_MARKS = new Set([
  'refresh_token',
  'urn:ietf:params:oauth:token-type:refresh_token',
  'refresh',
  'offline',
]);
/** `token_type` values of an access token presented as a bearer token (RFC 6750, RFC 8693 identifiers). */
const ACCESS_TOKEN_TYPES = new Set([
  'bearer',
  'access_token',
  'urn:ietf:params:oauth:token-type:access_token',
]);

/** An active, accepted token: its principal and what the replay check needs. */
export interface Introspected {
  readonly principal: Principal;
  readonly jti: unknown;
  readonly expiresAt: number;
}

/** Checks one opaque token; throws 401 for a token the IdP does not vouch for, 503 when it cannot be asked. */
export type Introspector = (token: string) => Promise<Introspected>;

type Outcome = { readonly ok: Introspected } | { readonly refused: ServiceError };

interface CacheEntry {
  readonly outcome: Outcome;
  /** Epoch milliseconds after which the entry is not used. */
  readonly until: number;
}

const tokenKey = (token: string): string => createHash('sha256').update(token).digest('base64url');

/** RFC 6749 §2.3.1: client id and secret are form-encoded before they are joined for HTTP Basic. */
const formEncode = (value: string): string => new URLSearchParams({ v: value }).toString().slice(2);

const basicAuthorization = (clientId: string, clientSecret: string): string =>
  `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`;

const retryLater = (retryAfterSecs: number): ServiceError =>
  new ServiceError('unavailable', 'Too many new tokens to check right now, try again later', undefined, {
    'Retry-After': String(retryAfterSecs),
  });

/**
 * At most `perSec` calls per second, in bursts of up to `perSec` (a token bucket): new users arriving together
 * are served, made-up tokens beyond the budget get a 503 and cost the IdP nothing.
 */
const callBudget = (perSec: number, now: () => number) => {
  let available = perSec;
  let updatedAt = now();
  return {
    /** Takes one call from the budget; throws the 503 (with Retry-After) when none is left. */
    take(): void {
      const at = now();
      available = Math.min(perSec, available + ((at - updatedAt) / 1000) * perSec);
      updatedAt = at;
      if (available < 1) throw retryLater(Math.max(1, Math.ceil((1 - available) / perSec)));
      available -= 1;
    },
  };
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const lowerText = (value: unknown): string | undefined =>
  typeof value === 'string' ? value.toLowerCase() : undefined;

/** The endpoint could not answer; logged for operators (never with the token), a 503 for the caller. */
const endpointFailure = (reason: string, details: Record<string, unknown> = {}): ServiceError => {
  logger.warn('token introspection failed', { reason, ...details });
  return unavailable('The token could not be checked, try again later');
};

export const createIntrospector = (
  config: AuthConfig,
  introspection: IntrospectionConfig & { readonly clientSecret: string },
  now: () => number,
): Introspector => {
  const cache = new LruCache<string, CacheEntry>(CACHE_ENTRIES);
  const inFlight = new Map<string, Promise<Outcome>>();
  const budget = callBudget(introspection.callsPerSec, now);
  const authorization = basicAuthorization(introspection.clientId, introspection.clientSecret);

  /** The answer's JSON; throws the 503 when the endpoint is down, slow, refuses us or answers nonsense. */
  const ask = async (token: string): Promise<unknown> => {
    let response: Response;
    let text: string;
    // A timer held here rather than AbortSignal.timeout(): that signal's timer is unreferenced, and while the
    // body drips in nothing else holds it, so the deadline could pass without firing.
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new DOMException('no answer within the deadline', 'TimeoutError')),
      INTROSPECTION_TIMEOUT_MS,
    );
    try {
      response = await fetch(introspection.url, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        // A redirect would carry the token and our credentials somewhere not configured.
        redirect: 'error',
        signal: deadline.signal,
      });
      // The deadline ends the body read too, whether or not the stream gives up on the abort itself.
      const expired = new Promise<never>((_, reject) => {
        deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason), { once: true });
      });
      const reading = bodyWithin(response, MAX_ANSWER_BYTES);
      reading.catch(() => undefined);
      const body = await Promise.race([reading, expired]).catch(async (error: unknown) => {
        await response.body?.cancel().catch(() => undefined);
        throw error;
      });
      if (!body) throw endpointFailure('answer too large', { max_bytes: MAX_ANSWER_BYTES });
      text = body.toString('utf8');
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      const name = (error as Error).name;
      throw endpointFailure(name === 'TimeoutError' ? 'no answer within the deadline' : 'unreachable', {
        error: name,
      });
    } finally {
      clearTimeout(timer);
    }
    if (response.status === 401 || response.status === 403)
      throw endpointFailure('the endpoint refused the client credentials', { status: response.status });
    if (response.status !== 200) throw endpointFailure('unexpected status', { status: response.status });
    try {
      return JSON.parse(text);
    } catch {
      throw endpointFailure('the answer is not JSON');
    }
  };

  /** Holds an active answer to the same rules as a JWT's claims (docs/auth.md); throws the 401 otherwise. */
  const judge = (answer: unknown): Introspected => {
    if (!isObject(answer) || typeof answer.active !== 'boolean') {
      logger.warn('token introspection answer without a boolean "active"; the token is refused');
      throw unauthorized('The token is not active');
    }
    if (!answer.active) throw unauthorized('The token is not active');
    if (
      [answer.token_type, answer.token_use, answer.typ].some((mark) =>
        REFRESH_MARKS.has(lowerText(mark) ?? ''),
      )
    )
      throw unauthorized('A refresh token grants no API access: present an access token');
    const tokenType = lowerText(answer.token_type);
    if (answer.token_type !== undefined && !ACCESS_TOKEN_TYPES.has(tokenType ?? ''))
      throw unauthorized('The token type is not accepted');
    if (answer.iss !== undefined && answer.iss !== config.issuer)
      throw unauthorized('The token issuer is not accepted');
    const nowSecs = now() / 1000;
    const skew = config.clockSkewSecs;
    if (typeof answer.exp !== 'number' || !Number.isFinite(answer.exp))
      throw unauthorized('The token has no "exp" claim');
    if (answer.exp <= nowSecs - skew) throw unauthorized('The token has expired');
    if (answer.nbf !== undefined && (typeof answer.nbf !== 'number' || answer.nbf > nowSecs + skew))
      throw unauthorized('The token is not valid yet');
    if (typeof answer.iat === 'number' && answer.iat > nowSecs + skew)
      throw unauthorized('The token was issued in the future');
    const ext = isObject(answer.ext) ? answer.ext : {};
    const principal = principalFor(config, {
      audiences: audiencesOf(answer.aud),
      userId: typeof answer.sub === 'string' ? answer.sub : undefined,
      serviceId: typeof answer.client_id === 'string' ? answer.client_id : undefined,
      // Ory Hydra puts a token's extra claims under `ext`.
      roles: stringsOf(answer.roles ?? ext.roles),
      scopes: stringsOf(answer.scope),
      expiresAt: answer.exp,
    });
    return { principal, jti: answer.jti, expiresAt: answer.exp };
  };

  const introspect = async (key: string, token: string): Promise<Outcome> => {
    budget.take();
    const answer = await ask(token);
    let outcome: Outcome;
    let until: number;
    try {
      const ok = judge(answer);
      outcome = { ok };
      until = Math.min(ok.expiresAt * 1000, now() + introspection.cacheTtlSecs * 1000);
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      outcome = { refused: error };
      until = now() + NEGATIVE_CACHE_SECS * 1000;
    }
    cache.set(key, { outcome, until });
    return outcome;
  };

  return async (token) => {
    const key = tokenKey(token);
    const cached = cache.get(key);
    let outcome: Outcome;
    if (cached && cached.until > now()) outcome = cached.outcome;
    else {
      // Concurrent requests with the same new token share one call.
      let pending = inFlight.get(key);
      if (!pending) {
        pending = introspect(key, token).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      outcome = await pending;
    }
    if ('refused' in outcome) throw outcome.refused;
    return outcome.ok;
  };
};
