// Apart from devices.ts so that the routes that validate no body (GET /devices) do not load zod.

import { createPublicKey } from 'node:crypto';
import { APNS_ENVIRONMENTS, PUSH_PROVIDERS } from '../../../common/settings';
import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import { pageLimit } from '../../core/page-limit';
import { NAME_BREAKING_MESSAGE, NAME_CHARACTERS } from '../../core/text-policy';
import * as z from '../../core/zod';

export const PLATFORMS = ['ios', 'android', 'web'] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * Devices one user may register: far above phones, tablets and browsers a person uses, and small enough that
 * the whole list (≤ 100 × ~4.4 KB) fits one response. Past it: 409 until one is deleted.
 */
export const MAX_DEVICES_PER_USER = 100;
export const MAX_DEVICES_PAGE = 100;

// Identifiers, so names under the text policy: no push service issues a token or app id with a newline in it.
const deviceToken = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(IDENTIFIER_CHARACTERS.deviceToken),
    z.regex(NAME_CHARACTERS, NAME_BREAKING_MESSAGE),
  );

/** Unpadded base64url, as a browser's `PushSubscription.toJSON()` gives the keys (padding is accepted too). */
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;
const base64urlBytes = (text: string): Buffer | undefined =>
  BASE64URL.test(text) ? Buffer.from(text.replace(/=+$/, ''), 'base64url') : undefined;

/** A Web Push `p256dh`: an uncompressed P-256 point (0x04, x, y) that is on the curve (RFC 8291 §3.1). */
const isP256Point = (text: string): boolean => {
  const bytes = base64urlBytes(text);
  if (bytes?.length !== 65 || bytes[0] !== 0x04) return false;
  try {
    const jwk = {
      kty: 'EC',
      crv: 'P-256',
      x: bytes.subarray(1, 33).toString('base64url'),
      y: bytes.subarray(33).toString('base64url'),
    };
    // Node (OpenSSL) refuses a JWK whose point is not on the curve.
    createPublicKey({ key: jwk, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
};

/** RFC 8291's authentication secret: 16 bytes. */
const WEB_PUSH_AUTH_BYTES = 16;

/** The browser's `PushSubscription` as JSON (`subscription.toJSON()`): what a Web Push device registers. */
const webPushSubscriptionSchema = z.strictObject({
  endpoint: deviceToken,
  // The browser's own expiry hint (null from every browser today); Notify learns of an expiry from the 404/410.
  expirationTime: z.optional(z.nullable(z.number())),
  keys: z.strictObject({
    p256dh: z
      .string()
      .check(
        z.maxLength(100),
        z.refine(
          isP256Point,
          'must be base64url of an uncompressed P-256 public key (65 bytes, on the curve)',
        ),
      ),
    auth: z.string().check(
      z.maxLength(30),
      z.refine(
        (text) => base64urlBytes(text)?.length === WEB_PUSH_AUTH_BYTES,
        `must be base64url of ${WEB_PUSH_AUTH_BYTES} bytes`,
      ),
    ),
  }),
});

export const registerDeviceSchema = z.strictObject({
  /** The provider's token; for Web Push the subscription's endpoint (then `subscription` alone is enough). */
  token: z.optional(deviceToken),
  platform: z.enum(PLATFORMS),
  /** Default from the platform: ios → apns, android → fcm, web → webpush. */
  provider: z.optional(z.enum(PUSH_PROVIDERS)),
  /** APNs devices only; default the app's (`push.apps.<app>.apns.environment`), else production. */
  apns_environment: z.optional(z.enum(APNS_ENVIRONMENTS)),
  /** Web Push devices only, and required for them. */
  subscription: z.optional(webPushSubscriptionSchema),
  app_id: z.optional(
    z.nullable(
      z
        .string()
        .check(
          z.minLength(1),
          z.maxLength(IDENTIFIER_CHARACTERS.appId),
          z.regex(NAME_CHARACTERS, NAME_BREAKING_MESSAGE),
        ),
    ),
  ),
});

export const deleteDeviceSchema = z.strictObject({ token: deviceToken });

export const listDevicesQuerySchema = z.strictObject({
  limit: pageLimit(MAX_DEVICES_PAGE, MAX_DEVICES_PAGE),
  cursor: z.optional(z.string().check(z.maxLength(64))),
});

export type RegisterDeviceInput = z.output<typeof registerDeviceSchema>;
export type ListDevicesQuery = z.output<typeof listDevicesQuerySchema>;
