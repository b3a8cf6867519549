import type { JWTVerifyGetKey } from 'jose';
import { unauthorized } from '../errors';
import { logger } from '../logger';
import { bodyWithin } from './bounded-body';

/**
 * Largest key set read from the IdP (docs/auth.md): real ones are a few KiB; reading an unbounded answer would let
 * a broken or hostile endpoint fill the function's memory.
 */
export const MAX_JWKS_BYTES = 1024 * 1024;
/** The smallest RSA modulus accepted for RS256 (RFC 7518 §3.3); shorter keys are forgeable. */
export const MIN_RSA_BITS = 2048;

/**
 * `fetch` for jose's remote key set that reads at most MAX_JWKS_BYTES of the answer. A longer one fails the fetch
 * (the key set is broken: 503, as any other broken key set) and is logged for the operator.
 */
export const boundedJwksFetch = async (url: string, init: RequestInit): Promise<Response> => {
  const response = await fetch(url, init);
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel();
    return new Response(null, { status: response.status, headers: response.headers });
  }
  const body = await bodyWithin(response, MAX_JWKS_BYTES);
  if (!body) {
    logger.error('JWKS: the key set answer is over the size limit; nothing of it is used', {
      jwks_url: url,
      max_bytes: MAX_JWKS_BYTES,
      content_length: response.headers.get('content-length'),
    });
    throw new Error(`the key set is over ${MAX_JWKS_BYTES} bytes`);
  }
  return new Response(body, { status: 200, headers: response.headers });
};

/**
 * Wraps the key lookup of a remote key set: an RSA key shorter than MIN_RSA_BITS makes the token invalid (401, as
 * a forged one), never a 503, and the operator reads which key of the set is too weak.
 */
export const refusingWeakKeys =
  (keys: JWTVerifyGetKey): JWTVerifyGetKey =>
  async (header, token) => {
    const key = await keys(header, token);
    // A CryptoKey of the set (jose's remote set imports them so); RSA ones carry their modulus length.
    const { modulusLength } = (key as { algorithm?: { modulusLength?: unknown } }).algorithm ?? {};
    if (typeof modulusLength === 'number' && modulusLength < MIN_RSA_BITS) {
      logger.warn('JWKS: a token names an RSA key shorter than the minimum; the token is refused', {
        kid: header.kid,
        modulus_bits: modulusLength,
        min_bits: MIN_RSA_BITS,
      });
      throw unauthorized('The token was signed with a key too weak to accept');
    }
    return key;
  };
