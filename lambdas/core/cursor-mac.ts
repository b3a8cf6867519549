/**
 * Signed paging cursors: `<payload, base64url>.<HMAC-SHA256 of scope + payload, first 16 bytes, base64url>`.
 * The scope (e.g. `feed:<user id>`) binds a cursor to the listing that issued it, so a client can neither edit
 * one nor use another user's. Any cursor content can be signed here: the listing decides what the payload is.
 *
 * The key is derived from a secret: on AWS a Secrets Manager secret the stack generates
 * (NOTIFY_CURSOR_KEY_SECRET_ARN; on a development stage the same secret as the generated HS256 key, which saves
 * a secret's monthly price), read once per instance on first use; locally NOTIFY_CURSOR_KEY, which the local
 * runtime keeps in its data folder (random per run in memory). Deriving (HMAC-SHA256 of a fixed label) keeps the
 * cursor key apart from the token key even when both come from one secret. Rotating the secret invalidates
 * cursors in flight (a client restarts from the first page).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as envNames from '../../common/env-names';
import { readSecretString } from './clients-secrets';
import { invalidCursor } from './errors';

const MAC_BYTES = 16;

let cachedKey: Promise<Buffer> | undefined;

/** The label the cursor key is derived under (HMAC-SHA256 keyed by the secret). */
const CURSOR_KEY_LABEL = 'notify paging cursor key v1';

const deriveKey = (secret: string): Buffer =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(CURSOR_KEY_LABEL, 'utf8').digest();

const loadKey = async (): Promise<Buffer> => {
  const local = process.env[envNames.cursorKey];
  if (local) return deriveKey(local);
  const secretArn = process.env[envNames.cursorKeySecretArn];
  if (!secretArn) throw new Error(`${envNames.cursorKeySecretArn} is not set: the cursor key is not wired`);
  return deriveKey(await readSecretString(secretArn));
};

const cursorKey = (): Promise<Buffer> => {
  // A failed read is retried by the next request instead of poisoning the instance.
  cachedKey ??= loadKey().catch((error: unknown) => {
    cachedKey = undefined;
    throw error;
  });
  return cachedKey;
};

const macOf = (key: Buffer, scope: string, payload: string): Buffer =>
  createHmac('sha256', key).update(`${scope}\n${payload}`, 'utf8').digest().subarray(0, MAC_BYTES);

export const signCursor = async (scope: string, payload: string): Promise<string> =>
  `${Buffer.from(payload, 'utf8').toString('base64url')}.${macOf(await cursorKey(), scope, payload).toString('base64url')}`;

/** The payload of a cursor this scope issued; anything else is a 400 `validation` on `cursor`. */
export const openCursor = async (scope: string, cursor: string): Promise<string> => {
  const [encoded, mac, extra] = cursor.split('.');
  if (!encoded || !mac || extra !== undefined) throw invalidCursor();
  const payload = Buffer.from(encoded, 'base64url').toString('utf8');
  const presented = Buffer.from(mac, 'base64url');
  const expected = macOf(await cursorKey(), scope, payload);
  // Canonical encodings only, so one position has one cursor.
  if (
    Buffer.from(payload, 'utf8').toString('base64url') !== encoded ||
    presented.toString('base64url') !== mac
  )
    throw invalidCursor();
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) throw invalidCursor();
  return payload;
};
