/**
 * Service settings read from the environment (contract §1: `SERVICE__SECTION__KEY`). This module has no AWS SDK
 * imports: the CDK app imports `parseAuthConfig` to validate a stage's settings at synth time.
 */
import { z } from 'zod';

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

/** The `auth` section of interface.md §5, plus `admin_role` and `replay_protection`. */
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
  /** When on, every token must carry a `jti` that is accepted only once. */
  readonly replayProtection: boolean;
}

const AUTH_PREFIX = 'SERVICE__AUTH__';

/** Setting key (as in interface.md, upper-cased) → environment variable name. */
const AUTH_KEYS = [
  'ISSUER',
  'AUDIENCE',
  'SERVICE_AUDIENCE',
  'JWKS_URL',
  'JWKS_CACHE_TTL',
  'CLOCK_SKEW_SECS',
  'HS256_SECRET',
  'ADMIN_ROLE',
  'REPLAY_PROTECTION',
] as const;
type AuthKey = (typeof AUTH_KEYS)[number];

/** Names of every environment variable the auth settings are read from, e.g. `SERVICE__AUTH__JWKS_URL`. */
export const AUTH_ENV_NAMES: readonly string[] = AUTH_KEYS.map((key) => `${AUTH_PREFIX}${key}`);

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

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** `300`, `300s`, `5m`, `1h` → seconds; undefined when the text is not such a duration. */
export const parseDurationSecs = (text: string): number | undefined => {
  const match = /^(\d{1,9})\s*([smh]?)$/i.exec(text.trim());
  if (!match?.[1]) return undefined;
  const unit = DURATION_UNITS[(match[2] || 's').toLowerCase()] ?? 1;
  return Number(match[1]) * unit;
};

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Empty or blank variables count as unset, as most deployment tools cannot unset a variable. */
const blankToUndefined = (value: unknown) =>
  typeof value === 'string' && value.trim() === ''
    ? undefined
    : typeof value === 'string'
      ? value.trim()
      : value;

const text = (what: string) =>
  z.preprocess(
    blankToUndefined,
    z.string({ error: (issue) => (issue.input === undefined ? 'is required' : what) }),
  );

const optionalText = () => z.preprocess(blankToUndefined, z.string().optional());

const schema = z
  .object({
    ISSUER: text('expected the issuer (`iss`) as a string'),
    AUDIENCE: optionalText().default(DEFAULT_AUDIENCE),
    SERVICE_AUDIENCE: optionalText().default(DEFAULT_SERVICE_AUDIENCE),
    JWKS_URL: optionalText().superRefine((value, ctx) => {
      if (value === undefined) return;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: `expected an https:// URL, got "${value}"` });
        return;
      }
      // Plain http would let anyone on the path swap the keys; allowed only for a key server on this machine.
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
        ctx.addIssue({
          code: 'custom',
          message: `expected an https:// URL (http:// only on loopback), got "${value}"`,
        });
      }
    }),
    JWKS_CACHE_TTL: optionalText().transform((value, ctx) => {
      if (value === undefined) return DEFAULT_JWKS_CACHE_TTL_SECS;
      const secs = parseDurationSecs(value);
      if (secs === undefined || secs < 1) {
        ctx.addIssue({ code: 'custom', message: `expected a duration like 300s or 5m, got "${value}"` });
        return z.NEVER;
      }
      return secs;
    }),
    CLOCK_SKEW_SECS: optionalText().transform((value, ctx) => {
      if (value === undefined) return DEFAULT_CLOCK_SKEW_SECS;
      if (!/^\d{1,6}$/.test(value)) {
        ctx.addIssue({ code: 'custom', message: `expected a whole number of seconds >= 0, got "${value}"` });
        return z.NEVER;
      }
      return Number(value);
    }),
    // Never echo the secret's value in an error.
    HS256_SECRET: optionalText().superRefine((value, ctx) => {
      if (value === undefined) return;
      const bytes = new TextEncoder().encode(value).length;
      if (bytes < MIN_HS256_SECRET_BYTES) {
        ctx.addIssue({
          code: 'custom',
          message: `expected at least ${MIN_HS256_SECRET_BYTES} bytes, got ${bytes}`,
        });
      }
    }),
    ADMIN_ROLE: optionalText().default(DEFAULT_ADMIN_ROLE),
    REPLAY_PROTECTION: optionalText().transform((value, ctx) => {
      if (value === undefined) return false;
      const normalized = value.toLowerCase();
      if (['true', '1', 'on', 'yes'].includes(normalized)) return true;
      if (['false', '0', 'off', 'no'].includes(normalized)) return false;
      ctx.addIssue({ code: 'custom', message: `expected true or false, got "${value}"` });
      return z.NEVER;
    }),
  })
  .superRefine((settings, ctx) => {
    if (settings.JWKS_URL === undefined && settings.HS256_SECRET === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['JWKS_URL'],
        message: `set it (or ${AUTH_PREFIX}HS256_SECRET for local development): no way to check token signatures`,
      });
    }
    if (settings.AUDIENCE === settings.SERVICE_AUDIENCE) {
      ctx.addIssue({
        code: 'custom',
        path: ['SERVICE_AUDIENCE'],
        message: `must differ from ${AUTH_PREFIX}AUDIENCE, or a user token could pass as a service token`,
      });
    }
  });

export interface ParseAuthConfigOptions {
  /** False for a deployed stage that is not marked as development (contract §1): HS256 is then refused. */
  readonly allowHs256?: boolean;
}

/** Validates the `SERVICE__AUTH__*` variables of `env`; throws a ConfigError naming each bad variable. */
export const parseAuthConfig = (
  env: Record<string, string | undefined>,
  options: ParseAuthConfigOptions = {},
): AuthConfig => {
  const raw: Partial<Record<AuthKey, string | undefined>> = {};
  for (const key of AUTH_KEYS) raw[key] = env[`${AUTH_PREFIX}${key}`];
  const result = schema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => ({
      name: `${AUTH_PREFIX}${String(issue.path[0] ?? '')}`,
      message: issue.message,
    }));
    throw new ConfigError(
      problems.map((problem) => `${problem.name}: ${problem.message}`).join('; '),
      problems.map((problem) => problem.name),
    );
  }
  const settings = result.data;
  if (settings.HS256_SECRET !== undefined && options.allowHs256 === false) {
    const name = `${AUTH_PREFIX}HS256_SECRET`;
    throw new ConfigError(`${name}: HS256 is for local development only; use ${AUTH_PREFIX}JWKS_URL`, [name]);
  }
  return {
    issuer: settings.ISSUER,
    audience: settings.AUDIENCE,
    serviceAudience: settings.SERVICE_AUDIENCE,
    jwksUrl: settings.JWKS_URL,
    jwksCacheTtlSecs: settings.JWKS_CACHE_TTL,
    clockSkewSecs: settings.CLOCK_SKEW_SECS,
    hs256Secret: settings.HS256_SECRET,
    adminRole: settings.ADMIN_ROLE,
    replayProtection: settings.REPLAY_PROTECTION,
  };
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
