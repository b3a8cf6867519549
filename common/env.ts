/**
 * The names of the settings read from the environment: the resource and service names (common/env-names.ts, as
 * `envNames`) and the `SERVICE__AUTH__*` and `SERVICE__PUSH__*` settings. Every name is declared here or there and
 * read through common/settings.ts or the reader of its area.
 */
export * as envNames from './env-names';

/** The `auth` settings of contract §1 (`SERVICE__AUTH__<KEY>`), in the order their problems are reported. */
export const AUTH_SETTING_KEYS = [
  'ISSUER',
  'AUDIENCE',
  'SERVICE_AUDIENCE',
  'JWKS_URL',
  'JWKS_CACHE_TTL',
  'CLOCK_SKEW_SECS',
  'HS256_SECRET',
  'ADMIN_ROLE',
  'REPLAY_PROTECTION',
  'INTROSPECTION_URL',
  'INTROSPECTION_CLIENT_ID',
  'INTROSPECTION_CLIENT_SECRET',
  'INTROSPECTION_CACHE_TTL',
  'INTROSPECTION_CALLS_PER_SEC',
] as const;
export type AuthSettingKey = (typeof AUTH_SETTING_KEYS)[number];

export const AUTH_SETTING_PREFIX = 'SERVICE__AUTH__';

/** `JWKS_URL` → `SERVICE__AUTH__JWKS_URL`. */
export const authSettingName = (key: AuthSettingKey): string => `${AUTH_SETTING_PREFIX}${key}`;

/** Header CloudFront adds to every request it forwards to the HTTP API (lower case, as API Gateway passes it). */
export const ORIGIN_VERIFY_HEADER = 'x-notify-origin-verify';

/** The push settings (docs/push.md), `SERVICE__PUSH__<KEY>`: the apps' credentials and, locally, the stand-ins. */
export const PUSH_SETTING_KEYS = [
  /** JSON: app id → provider → where its credentials are (`{"secret": name or ARN}`; locally `{"credentials": …}`). */
  'APPS',
  /** The app of devices registered without `app_id`. */
  'DEFAULT_APP',
  /** Base URLs of the providers (default: the real ones); `npm start` points them at its stand-ins. */
  'FCM_URL',
  'FCM_TOKEN_URL',
  'APNS_URL',
  /** A CA certificate (PEM) the APNs connection trusts besides the system's: the local stand-in's. */
  'APNS_CA',
  'EXPO_URL',
] as const;
export type PushSettingKey = (typeof PUSH_SETTING_KEYS)[number];

export const PUSH_SETTING_PREFIX = 'SERVICE__PUSH__';

/** `APPS` → `SERVICE__PUSH__APPS`. */
export const pushSettingName = (key: PushSettingKey): string => `${PUSH_SETTING_PREFIX}${key}`;
