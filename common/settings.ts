/**
 * The one settings reader: every setting a function reads from the environment goes through a reader here, by a
 * name from common/env.ts. It imports nothing but that: every function bundles it, and the CDK app runs
 * `parseAuthConfig` to check a stage's settings at synth time.
 */
import {
  AUTH_SETTING_KEYS,
  type AuthSettingKey,
  authSettingName,
  type PushSettingKey,
  pushSettingName,
} from './env';

type Environment = Readonly<Record<string, string | undefined>>;

/** The setting's text, trimmed; undefined when unset, empty or blank (most deployment tools cannot unset a variable). */
const settingText = (env: Environment, name: string): string | undefined => env[name]?.trim() || undefined;

/** What a numeric setting must be: the test, and the words that follow the variable's name when it fails. */
interface NumberRule {
  readonly valid: (value: number) => boolean;
  readonly requirement: string;
}

/** A numeric setting: its value, `fallback` when unset; throws naming the variable and the rule when it breaks it. */
const numberSetting = (env: Environment, name: string, fallback: number, rule: NumberRule): number => {
  const raw = settingText(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!rule.valid(value)) throw new Error(`${name} must be ${rule.requirement}`);
  return value;
};

const POSITIVE_SECONDS: NumberRule = {
  valid: (value) => Number.isFinite(value) && value > 0,
  requirement: 'a positive number of seconds',
};
const POSITIVE_NUMBER: NumberRule = { valid: POSITIVE_SECONDS.valid, requirement: 'a positive number' };
const POSITIVE_INTEGER: NumberRule = {
  valid: (value) => Number.isInteger(value) && value >= 1,
  requirement: 'a positive integer',
};

/** A positive number of seconds (fractions allowed, so tests can shorten a duration below a second). */
export const positiveSecondsSetting = (name: string, fallback: number, env: Environment = process.env) =>
  numberSetting(env, name, fallback, POSITIVE_SECONDS);

/** A positive number, fractions allowed (milliseconds; a count that is rounded up where it is used). */
export const positiveNumberSetting = (name: string, fallback: number, env: Environment = process.env) =>
  numberSetting(env, name, fallback, POSITIVE_NUMBER);

/** A whole number >= 1 (counts, shards). */
export const positiveIntegerSetting = (name: string, fallback: number, env: Environment = process.env) =>
  numberSetting(env, name, fallback, POSITIVE_INTEGER);

/** A whole number from 1 to `max`, e.g. shards bounded by what one batch read can reach. */
export const boundedIntegerSetting = (name: string, fallback: number, max: number, env = process.env) =>
  numberSetting(env, name, fallback, {
    valid: (value) => POSITIVE_INTEGER.valid(value) && value <= max,
    requirement: `an integer from 1 to ${max}`,
  });

/** `true`, `1`, `yes` or `on` (any case); anything else, or unset, is false. */
export const flagSetting = (name: string, env: Environment = process.env): boolean =>
  ['true', '1', 'yes', 'on'].includes((settingText(env, name) ?? '').toLowerCase());

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/i;
const DURATION_UNIT_SECS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** `250ms`, `1.5s`, `5m`, `2h`, `1d` or plain seconds (any case) → seconds; undefined when it is no such duration. */
const durationSecsOf = (text: string): number | undefined => {
  const match = DURATION.exec(text.trim());
  if (!match?.[1]) return undefined;
  return Number(match[1]) * (DURATION_UNIT_SECS[(match[2] ?? 's').toLowerCase()] ?? 1);
};

/** Durations separated by commas (`5s,5m,2h`), in seconds each; `fallback` when unset. */
export const durationListSetting = (
  name: string,
  fallback: readonly number[],
  env: Environment = process.env,
): number[] => {
  const raw = settingText(env, name);
  if (raw === undefined) return [...fallback];
  return raw.split(',').map((part) => {
    const secs = durationSecsOf(part);
    if (secs === undefined) {
      throw new Error(
        `${name} must be durations like 5s, 5m or 2h separated by commas, not "${part.trim()}"`,
      );
    }
    return secs;
  });
};
/** A setting is missing or malformed; the message names the environment variable. */
export class ConfigError extends Error {
  constructor(
    message: string,
    /** Environment variable names of the offending settings. */
    readonly keys: readonly string[],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The `auth` settings of docs/contract.md §2, plus `admin_role` and `replay_protection`. */
export interface AuthConfig {
  /** Expected `iss`. */
  readonly issuer: string;
  /** Expected `aud` of user access tokens. */
  readonly audience: string;
  /** Expected `aud` of service tokens. */
  readonly serviceAudience: string;
  /** Key set address for RS256/ES256 tokens; undefined when only HS256 is configured. */
  readonly jwksUrl: string | undefined;
  /** Lifetime of the cached key set, in seconds. */
  readonly jwksCacheTtlSecs: number;
  /** Tolerated clock skew for `exp` and `nbf`, in seconds. */
  readonly clockSkewSecs: number;
  /** Shared secret for HS256 tokens (local development only); undefined when not configured. */
  readonly hs256Secret: string | undefined;
  /** A user whose `roles` contain this role is an admin. */
  readonly adminRole: string;
  /** Which tokens must carry a `jti` accepted only once (single-use): none, service tokens, or every token. */
  readonly replayProtection: ReplayProtection;
  /** The IdP's RFC 7662 endpoint that checks tokens which are not JWTs; undefined: such tokens are refused. */
  readonly introspection: IntrospectionConfig | undefined;
}

/** How opaque tokens are checked (RFC 7662); set when `SERVICE__AUTH__INTROSPECTION_URL` is. */
export interface IntrospectionConfig {
  readonly url: string;
  /** Client credentials the service authenticates with at the endpoint (HTTP Basic). */
  readonly clientId: string;
  /** Undefined only while it is still to be read from Secrets Manager (deployed stages). */
  readonly clientSecret: string | undefined;
  /** Longest time an active answer is reused, in seconds (never beyond the token's `exp`). */
  readonly cacheTtlSecs: number;
  /** Introspection calls one process (Lambda instance) makes per second at most; the excess is a 503. */
  readonly callsPerSec: number;
}

/**
 * `off`: tokens are reused until they expire (OAuth bearer tokens; what browser and mobile apps need).
 * `service`: service tokens are single-use (per-call assertions); user tokens are not.
 * `all`: every token is single-use; breaks any app that reuses its access token.
 */
export const REPLAY_PROTECTION_SCOPES = ['off', 'service', 'all'] as const;
export type ReplayProtection = (typeof REPLAY_PROTECTION_SCOPES)[number];

type AuthKey = AuthSettingKey;

// Marked pure: esbuild keeps a top-level call in every bundle importing the module, used or not.
/** Names of every environment variable the auth settings are read from, e.g. `SERVICE__AUTH__JWKS_URL`. */
export const AUTH_ENV_NAMES: readonly string[] = /* @__PURE__ */ AUTH_SETTING_KEYS.map(authSettingName);

/**
 * The auth variables that are set in `env` (e.g. `process.env` of `cdk synth`), ready to be passed on as a
 * function's environment.
 */
export const pickAuthEnv = (env: Record<string, string | undefined>): Record<string, string> => {
  const picked: Record<string, string> = {};
  for (const name of AUTH_ENV_NAMES) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') picked[name] = value;
  }
  return picked;
};

export const DEFAULT_AUDIENCE = 'notify';
export const DEFAULT_SERVICE_AUDIENCE = 'notify.s2s';
export const DEFAULT_JWKS_CACHE_TTL_SECS = 300;
export const DEFAULT_CLOCK_SKEW_SECS = 30;
export const DEFAULT_ADMIN_ROLE = 'admin';
export const MIN_HS256_SECRET_BYTES = 32;
export const DEFAULT_INTROSPECTION_CACHE_TTL_SECS = 60;
export const DEFAULT_INTROSPECTION_CALLS_PER_SEC = 20;

/** `300`, `300s`, `5m`, `1h` → seconds: whole numbers of seconds, minutes or hours; undefined for anything else. */
export const parseDurationSecs = (text: string): number | undefined =>
  /^\d{1,9}\s*[smh]?$/i.test(text.trim()) ? durationSecsOf(text) : undefined;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why a setting's text is refused; the message follows the variable's name in the ConfigError. */
class Invalid {
  constructor(readonly message: string) {}
}

/** Turns a setting's (trimmed, non-blank) text into its value, or says why it cannot. */
type ParseSetting<T> = (text: string) => T | Invalid;

const asText: ParseSetting<string> = (text) => text;

/** An address the service sends requests to that must not be read or altered on the way. */
const secureUrl: ParseSetting<string> = (text) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return new Invalid(`expected an https:// URL, got "${text}"`);
  }
  // fetch refuses such an address, and the credentials would sit in the template: said without echoing them.
  if (url.username !== '' || url.password !== '')
    return new Invalid('expected an https:// URL without credentials in it (user:password@)');
  // Plain http would let anyone on the path swap the keys or read the tokens; allowed only on this machine.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    return new Invalid(`expected an https:// URL (http:// only on loopback), got "${text}"`);
  }
  return text;
};

const durationSecs: ParseSetting<number> = (text) => {
  const secs = parseDurationSecs(text);
  return secs === undefined || secs < 1
    ? new Invalid(`expected a duration like 300s or 5m, got "${text}"`)
    : secs;
};

const wholeSecs: ParseSetting<number> = (text) =>
  /^\d{1,6}$/.test(text)
    ? Number(text)
    : new Invalid(`expected a whole number of seconds >= 0, got "${text}"`);

const positiveCount: ParseSetting<number> = (text) =>
  /^\d{1,6}$/.test(text) && Number(text) >= 1
    ? Number(text)
    : new Invalid(`expected a whole number >= 1, got "${text}"`);

// Never echo the secret's value in an error.
const hs256Secret: ParseSetting<string> = (text) => {
  const bytes = new TextEncoder().encode(text).length;
  return bytes < MIN_HS256_SECRET_BYTES
    ? new Invalid(`expected at least ${MIN_HS256_SECRET_BYTES} bytes, got ${bytes}`)
    : text;
};

/** `true` and `false` were this setting's values before it was scoped: they keep their meaning. */
const LEGACY_REPLAY_PROTECTION: Record<string, ReplayProtection> = { true: 'all', false: 'off' };

const replayProtection: ParseSetting<ReplayProtection> = (text) => {
  const normalized = text.toLowerCase();
  const scope = (REPLAY_PROTECTION_SCOPES as readonly string[]).includes(normalized)
    ? (normalized as ReplayProtection)
    : LEGACY_REPLAY_PROTECTION[normalized];
  return scope ?? new Invalid(`expected off, service or all, got "${text}"`);
};

/**
 * The replay scope that `SERVICE__AUTH__REPLAY_PROTECTION` in `env` asks for (`off` when unset). A value
 * parseAuthConfig would refuse counts as `all` here, so whoever sizes grants from it errs on the side of access.
 */
export const replayProtectionIn = (env: Readonly<Record<string, string | undefined>>): ReplayProtection => {
  const text = env[authSettingName('REPLAY_PROTECTION')];
  if (text === undefined || text === '') return 'off';
  const scope = replayProtection(text);
  return scope instanceof Invalid ? 'all' : scope;
};

export interface ParseAuthConfigOptions {
  /** False for a deployed stage that is not marked as development (contract §1): HS256 is then refused. */
  readonly allowHs256?: boolean;
  /**
   * True where the introspection client secret is read from Secrets Manager after this check (a deployed
   * stage): it is then not required in `env`.
   */
  readonly introspectionSecretElsewhere?: boolean;
}

/**
 * Validates the `SERVICE__AUTH__*` variables of `env`; throws a ConfigError naming each bad variable.
 * Hand-written rather than a zod schema: this module is in every HTTP and WebSocket bundle, and zod would
 * add ~440 KiB to the routes that validate nothing (docs/performance.md, "Cold start").
 */
export const parseAuthConfig = (
  env: Record<string, string | undefined>,
  options: ParseAuthConfigOptions = {},
): AuthConfig => {
  const problems: { key: AuthKey; message: string }[] = [];
  /** Empty or blank variables count as unset, as most deployment tools cannot unset a variable. */
  const textOf = (key: AuthKey): string | undefined => env[authSettingName(key)]?.trim() || undefined;
  /** The setting's value; `unset` when it is not set, and also when it is invalid (the problem is recorded). */
  const read = <T, U>(key: AuthKey, parse: ParseSetting<T>, unset: U): T | U => {
    const text = textOf(key);
    if (text === undefined) return unset;
    const value = parse(text);
    if (!(value instanceof Invalid)) return value;
    problems.push({ key, message: value.message });
    return unset;
  };

  // Read in AUTH_SETTING_KEYS order, so the message lists the problems in that order.
  const issuer = read('ISSUER', asText, undefined);
  if (issuer === undefined) problems.push({ key: 'ISSUER', message: 'is required' });
  let config: AuthConfig = {
    issuer: issuer ?? '',
    audience: read('AUDIENCE', asText, DEFAULT_AUDIENCE),
    serviceAudience: read('SERVICE_AUDIENCE', asText, DEFAULT_SERVICE_AUDIENCE),
    jwksUrl: read('JWKS_URL', secureUrl, undefined),
    jwksCacheTtlSecs: read('JWKS_CACHE_TTL', durationSecs, DEFAULT_JWKS_CACHE_TTL_SECS),
    clockSkewSecs: read('CLOCK_SKEW_SECS', wholeSecs, DEFAULT_CLOCK_SKEW_SECS),
    hs256Secret: read('HS256_SECRET', hs256Secret, undefined),
    adminRole: read('ADMIN_ROLE', asText, DEFAULT_ADMIN_ROLE),
    replayProtection: read('REPLAY_PROTECTION', replayProtection, 'off'),
    introspection: undefined,
  };
  const introspectionUrl = read('INTROSPECTION_URL', secureUrl, undefined);
  const clientId = read('INTROSPECTION_CLIENT_ID', asText, undefined);
  // Read like any other setting but never echoed: asText's only failure would be blank, which reads as unset.
  const clientSecret = read('INTROSPECTION_CLIENT_SECRET', asText, undefined);
  const cacheTtlSecs = read('INTROSPECTION_CACHE_TTL', durationSecs, DEFAULT_INTROSPECTION_CACHE_TTL_SECS);
  const callsPerSec = read('INTROSPECTION_CALLS_PER_SEC', positiveCount, DEFAULT_INTROSPECTION_CALLS_PER_SEC);
  if (introspectionUrl !== undefined) {
    if (clientId === undefined)
      problems.push({
        key: 'INTROSPECTION_CLIENT_ID',
        message: `is required with ${authSettingName('INTROSPECTION_URL')}`,
      });
    if (clientSecret === undefined && !options.introspectionSecretElsewhere)
      problems.push({
        key: 'INTROSPECTION_CLIENT_SECRET',
        message: `is required with ${authSettingName('INTROSPECTION_URL')}`,
      });
    config = {
      ...config,
      introspection: {
        url: introspectionUrl,
        clientId: clientId ?? '',
        clientSecret,
        cacheTtlSecs,
        callsPerSec,
      },
    };
  }
  if (
    textOf('JWKS_URL') === undefined &&
    textOf('HS256_SECRET') === undefined &&
    textOf('INTROSPECTION_URL') === undefined
  ) {
    problems.push({
      key: 'JWKS_URL',
      message: `set it (or ${authSettingName('INTROSPECTION_URL')}, or ${authSettingName('HS256_SECRET')} for local development): no way to check tokens`,
    });
  }
  if (config.audience === config.serviceAudience) {
    problems.push({
      key: 'SERVICE_AUDIENCE',
      message: `must differ from ${authSettingName('AUDIENCE')}, or a user token could pass as a service token`,
    });
  }
  if (problems.length > 0) {
    const names = problems.map((problem) => authSettingName(problem.key));
    throw new ConfigError(
      problems.map((problem, index) => `${names[index]}: ${problem.message}`).join('; '),
      names,
    );
  }
  if (config.hs256Secret !== undefined && options.allowHs256 === false) {
    const name = authSettingName('HS256_SECRET');
    throw new ConfigError(
      `${name}: HS256 is for local development only; use ${authSettingName('JWKS_URL')}`,
      [name],
    );
  }
  return config;
};

let cachedAuthConfig: AuthConfig | undefined;

/**
 * The auth settings of this process, read from process.env once. Throws (on first use, i.e. the first
 * request of a cold start) when they are missing or malformed, so a misconfigured function fails loudly.
 */
export const authConfig = (): AuthConfig => {
  cachedAuthConfig ??= parseAuthConfig(process.env);
  return cachedAuthConfig;
};

/** Forgets the cached settings; for tests that change process.env. */
export const resetAuthConfigForTests = (): void => {
  cachedAuthConfig = undefined;
};

/** The push services Notify speaks (docs/push.md). */
export const PUSH_PROVIDERS = ['fcm', 'apns', 'webpush', 'expo'] as const;
export type PushProvider = (typeof PUSH_PROVIDERS)[number];

export const APNS_ENVIRONMENTS = ['sandbox', 'production'] as const;
export type ApnsEnvironment = (typeof APNS_ENVIRONMENTS)[number];

/**
 * Where one provider's credentials of one app are: a Secrets Manager secret (name or ARN; deployed stages), or
 * the credentials themselves (the local runtime's generated ones). Expo may have neither: its access token is
 * optional.
 */
export type PushCredentialSource =
  | { readonly secret: string }
  | { readonly credentials: unknown }
  | { readonly none: true };

export interface PushProviderSettings {
  readonly source: PushCredentialSource;
  /** APNs: the environment of the app's devices registered without `apns_environment`. */
  readonly apnsEnvironment?: ApnsEnvironment;
}

export type PushApp = Readonly<Partial<Record<PushProvider, PushProviderSettings>>>;

export interface PushSettings {
  /** The apps that may receive pushes, by app id; empty when push is not configured. */
  readonly apps: ReadonlyMap<string, PushApp>;
  /** The app of devices registered without `app_id`; undefined when no app is configured. */
  readonly defaultApp: string | undefined;
  /** Provider base URLs other than the real ones (the local stand-ins); undefined: the provider's own. */
  readonly urls: {
    readonly fcm: string | undefined;
    readonly fcmToken: string | undefined;
    readonly apns: string | undefined;
    readonly expo: string | undefined;
  };
  /** A CA certificate (PEM) trusted for APNs besides the system's (the local stand-in's). */
  readonly apnsCa: string | undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One provider entry of `SERVICE__PUSH__APPS`; a string is the problem (after `apps.<app>.<provider>`). */
const pushProviderSettings = (provider: PushProvider, entry: unknown): PushProviderSettings | string => {
  if (!isObject(entry)) return 'expected an object';
  const allowed = provider === 'apns' ? ['secret', 'credentials', 'environment'] : ['secret', 'credentials'];
  const unknown = Object.keys(entry).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) return `unknown field ${unknown.join(', ')}`;
  const { secret, credentials, environment } = entry;
  if (secret !== undefined && (typeof secret !== 'string' || secret.trim() === ''))
    return 'secret: expected the name or ARN of a Secrets Manager secret';
  if (secret !== undefined && credentials !== undefined) return 'expected secret or credentials, not both';
  if (environment !== undefined && !(APNS_ENVIRONMENTS as readonly unknown[]).includes(environment))
    return `environment: expected ${APNS_ENVIRONMENTS.join(' or ')}`;
  const source: PushCredentialSource | 'missing' =
    typeof secret === 'string'
      ? { secret }
      : credentials !== undefined
        ? { credentials }
        : provider === 'expo'
          ? { none: true }
          : 'missing';
  if (source === 'missing') return 'expected secret (a Secrets Manager secret name or ARN)';
  return environment === undefined ? { source } : { source, apnsEnvironment: environment as ApnsEnvironment };
};

/**
 * Validates the `SERVICE__PUSH__*` variables of `env`; throws a ConfigError naming each bad variable (secrets and
 * credentials are never echoed). Hand-written for the reason parseAuthConfig is.
 */
export const parsePushSettings = (env: Environment): PushSettings => {
  const problems: { key: PushSettingKey; message: string }[] = [];
  const apps = new Map<string, PushApp>();
  const appsText = settingText(env, pushSettingName('APPS'));
  if (appsText !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(appsText);
    } catch {
      raw = undefined;
    }
    if (!isObject(raw)) problems.push({ key: 'APPS', message: 'expected a JSON object of app ids' });
    for (const [appId, providers] of Object.entries(isObject(raw) ? raw : {})) {
      if (!isObject(providers) || Object.keys(providers).length === 0) {
        problems.push({
          key: 'APPS',
          message: `${appId}: expected an object of providers (${PUSH_PROVIDERS.join(', ')})`,
        });
        continue;
      }
      const app: Partial<Record<PushProvider, PushProviderSettings>> = {};
      for (const [provider, entry] of Object.entries(providers)) {
        if (!(PUSH_PROVIDERS as readonly string[]).includes(provider)) {
          problems.push({
            key: 'APPS',
            message: `${appId}.${provider}: not a provider (${PUSH_PROVIDERS.join(', ')})`,
          });
          continue;
        }
        const settings = pushProviderSettings(provider as PushProvider, entry);
        if (typeof settings === 'string')
          problems.push({ key: 'APPS', message: `${appId}.${provider}: ${settings}` });
        else app[provider as PushProvider] = settings;
      }
      apps.set(appId, app);
    }
  }
  const named = settingText(env, pushSettingName('DEFAULT_APP'));
  if (named !== undefined && !apps.has(named))
    problems.push({ key: 'DEFAULT_APP', message: `"${named}" is not an app of ${pushSettingName('APPS')}` });
  if (named === undefined && apps.size > 1)
    problems.push({
      key: 'DEFAULT_APP',
      message: `is required with more than one app in ${pushSettingName('APPS')}`,
    });
  const url = (key: PushSettingKey): string | undefined => {
    const text = settingText(env, pushSettingName(key))?.trim();
    if (text === undefined) return undefined;
    const value = secureUrl(text);
    if (!(value instanceof Invalid)) return value;
    problems.push({ key, message: value.message });
    return undefined;
  };
  const urls = {
    fcm: url('FCM_URL'),
    fcmToken: url('FCM_TOKEN_URL'),
    apns: url('APNS_URL'),
    expo: url('EXPO_URL'),
  };
  const apnsCa = settingText(env, pushSettingName('APNS_CA'));
  if (apnsCa !== undefined && !apnsCa.includes('-----BEGIN CERTIFICATE-----'))
    problems.push({ key: 'APNS_CA', message: 'expected a PEM certificate' });
  if (problems.length > 0) {
    const names = problems.map((problem) => pushSettingName(problem.key));
    throw new ConfigError(
      problems.map((problem, index) => `${names[index]}: ${problem.message}`).join('; '),
      [...new Set(names)],
    );
  }
  return {
    apps,
    defaultApp: named ?? (apps.size === 1 ? [...apps.keys()][0] : undefined),
    urls,
    apnsCa,
  };
};

let cachedPushSettings: PushSettings | undefined;

/** The push settings of this process, read from process.env once (throws, naming the variable, when malformed). */
export const pushSettings = (): PushSettings => {
  cachedPushSettings ??= parsePushSettings(process.env);
  return cachedPushSettings;
};
