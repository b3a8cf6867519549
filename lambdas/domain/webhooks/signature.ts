import { createHmac } from 'node:crypto';

const WHSEC_PREFIX = 'whsec_';

/** Contract §3: the secret's UTF-8 bytes, or for `whsec_<base64>` the decoded bytes (as Standard Webhooks' libraries do). */
export const signingKey = (secret: string): Buffer =>
  secret.startsWith(WHSEC_PREFIX)
    ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64')
    : Buffer.from(secret);

/** `webhook-signature` value: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export const signatureHeader = (secret: string, id: string, timestampSecs: number, body: string): string =>
  `v1,${createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSecs}.${body}`).digest('base64')}`;
