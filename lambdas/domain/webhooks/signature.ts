import { createHmac } from 'node:crypto';

const WHSEC_PREFIX = 'whsec_';
/** Standard base64 with its padding: what Standard Webhooks' libraries decode without error. */
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The same floor as a plain secret's 16 characters. */
export const MIN_WHSEC_KEY_BYTES = 16;

/**
 * Why a secret cannot be used as a key, or undefined. Only `whsec_` secrets can fail: Node's base64 decoder
 * skips characters it does not know, so `whsec_!!!…` would otherwise sign with an empty (forgeable) key.
 */
export const secretProblem = (secret: string): string | undefined => {
  if (!secret.startsWith(WHSEC_PREFIX)) return undefined;
  const encoded = secret.slice(WHSEC_PREFIX.length);
  if (!STRICT_BASE64.test(encoded))
    return 'a whsec_ secret must be standard base64 (A–Z, a–z, 0–9, +, /, = padding)';
  if (Buffer.from(encoded, 'base64').length < MIN_WHSEC_KEY_BYTES)
    return `a whsec_ secret must decode to at least ${MIN_WHSEC_KEY_BYTES} bytes`;
  return undefined;
};

/** Contract §3: the secret's UTF-8 bytes, or for `whsec_<base64>` the decoded bytes (as Standard Webhooks' libraries do). */
export const signingKey = (secret: string): Buffer => {
  const problem = secretProblem(secret);
  if (problem) throw new Error(`unusable webhook secret: ${problem}`);
  return secret.startsWith(WHSEC_PREFIX)
    ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64')
    : Buffer.from(secret);
};

/** `webhook-signature` value: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export const signatureHeader = (secret: string, id: string, timestampSecs: number, body: string): string =>
  `v1,${createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSecs}.${body}`).digest('base64')}`;
