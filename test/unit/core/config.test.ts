import { afterEach, describe, expect, it } from 'vitest';
import {
  AUTH_ENV_NAMES,
  authConfig,
  boundedIntegerSetting,
  ConfigError,
  durationListSetting,
  flagSetting,
  parseAuthConfig,
  parseDurationSecs,
  pickAuthEnv,
  positiveIntegerSetting,
  positiveNumberSetting,
  positiveSecondsSetting,
  resetAuthConfigForTests,
} from '../../../common/settings';

const minimal = {
  SERVICE__AUTH__ISSUER: 'https://idp.example.com',
  SERVICE__AUTH__JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
};

/** The ConfigError thrown for `env`. */
const configError = (env: Record<string, string | undefined>, allowHs256?: boolean): ConfigError => {
  try {
    parseAuthConfig(env, allowHs256 === undefined ? {} : { allowHs256 });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
};

describe('parseAuthConfig', () => {
  it('applies the documented defaults', () => {
    expect(parseAuthConfig(minimal)).toEqual({
      issuer: 'https://idp.example.com',
      audience: 'notify',
      serviceAudience: 'notify.s2s',
      jwksUrl: 'https://idp.example.com/.well-known/jwks.json',
      jwksCacheTtlSecs: 300,
      clockSkewSecs: 30,
      hs256Secret: undefined,
      adminRole: 'admin',
      replayProtection: 'off',
    });
  });

  it('reads every setting from its SERVICE__AUTH__ variable', () => {
    const config = parseAuthConfig({
      ...minimal,
      SERVICE__AUTH__AUDIENCE: 'api',
      SERVICE__AUTH__SERVICE_AUDIENCE: 'api.internal',
      SERVICE__AUTH__JWKS_CACHE_TTL: '10m',
      SERVICE__AUTH__CLOCK_SKEW_SECS: '0',
      SERVICE__AUTH__HS256_SECRET: 'a'.repeat(32),
      SERVICE__AUTH__ADMIN_ROLE: 'ops',
      SERVICE__AUTH__REPLAY_PROTECTION: 'service',
    });
    expect(config).toMatchObject({
      audience: 'api',
      serviceAudience: 'api.internal',
      jwksCacheTtlSecs: 600,
      clockSkewSecs: 0,
      hs256Secret: 'a'.repeat(32),
      adminRole: 'ops',
      replayProtection: 'service',
    });
  });

  it('scopes replay protection: off, service or all; true and false keep their old meaning', () => {
    const scope = (value: string) =>
      parseAuthConfig({ ...minimal, SERVICE__AUTH__REPLAY_PROTECTION: value }).replayProtection;
    expect(scope('off')).toBe('off');
    expect(scope('service')).toBe('service');
    expect(scope(' ALL ')).toBe('all');
    expect(scope('true')).toBe('all');
    expect(scope('false')).toBe('off');
    expect(configError({ ...minimal, SERVICE__AUTH__REPLAY_PROTECTION: 'users' }).message).toBe(
      'SERVICE__AUTH__REPLAY_PROTECTION: expected off, service or all, got "users"',
    );
  });

  it('parses jwks_cache_ttl durations: 300s, 5m, 1h and plain seconds', () => {
    const ttl = (value: string) =>
      parseAuthConfig({ ...minimal, SERVICE__AUTH__JWKS_CACHE_TTL: value }).jwksCacheTtlSecs;
    expect(ttl('300s')).toBe(300);
    expect(ttl('5m')).toBe(300);
    expect(ttl('1h')).toBe(3600);
    expect(ttl('45')).toBe(45);
    expect(ttl(' 90S ')).toBe(90);
    expect(parseDurationSecs('1d')).toBeUndefined();
    expect(parseDurationSecs('-5s')).toBeUndefined();
    expect(parseDurationSecs('1.5m')).toBeUndefined();
  });

  it('names the bad key by its environment name', () => {
    expect(configError({ ...minimal, SERVICE__AUTH__JWKS_CACHE_TTL: 'abc' }).message).toBe(
      'SERVICE__AUTH__JWKS_CACHE_TTL: expected a duration like 300s or 5m, got "abc"',
    );
    expect(configError({ ...minimal, SERVICE__AUTH__JWKS_CACHE_TTL: '0s' }).keys).toEqual([
      'SERVICE__AUTH__JWKS_CACHE_TTL',
    ]);
    expect(configError({ ...minimal, SERVICE__AUTH__CLOCK_SKEW_SECS: '-1' }).message).toBe(
      'SERVICE__AUTH__CLOCK_SKEW_SECS: expected a whole number of seconds >= 0, got "-1"',
    );
    expect(configError({ ...minimal, SERVICE__AUTH__REPLAY_PROTECTION: 'maybe' }).keys).toEqual([
      'SERVICE__AUTH__REPLAY_PROTECTION',
    ]);
    expect(configError({ ...minimal, SERVICE__AUTH__JWKS_URL: 'not a url' }).keys).toEqual([
      'SERVICE__AUTH__JWKS_URL',
    ]);
  });

  it('requires the issuer', () => {
    const error = configError({
      SERVICE__AUTH__JWKS_URL: minimal.SERVICE__AUTH__JWKS_URL,
      SERVICE__AUTH__ISSUER: ' ',
    });
    expect(error.message).toBe('SERVICE__AUTH__ISSUER: is required');
  });

  it('requires a key set address or an HS256 secret', () => {
    const error = configError({ SERVICE__AUTH__ISSUER: 'https://idp.example.com' });
    expect(error.keys).toEqual(['SERVICE__AUTH__JWKS_URL']);
    expect(
      parseAuthConfig({ SERVICE__AUTH__ISSUER: 'x', SERVICE__AUTH__HS256_SECRET: 's'.repeat(32) }).jwksUrl,
    ).toBe(undefined);
  });

  it('refuses an HS256 secret under 32 bytes without echoing it', () => {
    const error = configError({ ...minimal, SERVICE__AUTH__HS256_SECRET: 'hunter2' });
    expect(error.message).toBe('SERVICE__AUTH__HS256_SECRET: expected at least 32 bytes, got 7');
    expect(error.message).not.toContain('hunter2');
  });

  it('refuses HS256 where it is not allowed (a deployed, non-development stage)', () => {
    const env = { ...minimal, SERVICE__AUTH__HS256_SECRET: 's'.repeat(32) };
    expect(configError(env, false).keys).toEqual(['SERVICE__AUTH__HS256_SECRET']);
    expect(parseAuthConfig(env, { allowHs256: true }).hs256Secret).toBe('s'.repeat(32));
  });

  it('refuses a plain http key set address except on loopback', () => {
    expect(configError({ ...minimal, SERVICE__AUTH__JWKS_URL: 'http://idp.example.com/jwks' }).keys).toEqual([
      'SERVICE__AUTH__JWKS_URL',
    ]);
    expect(
      parseAuthConfig({ ...minimal, SERVICE__AUTH__JWKS_URL: 'http://127.0.0.1:9000/jwks' }).jwksUrl,
    ).toBe('http://127.0.0.1:9000/jwks');
  });

  it('refuses identical user and service audiences', () => {
    const error = configError({ ...minimal, SERVICE__AUTH__SERVICE_AUDIENCE: 'notify' });
    expect(error.keys).toEqual(['SERVICE__AUTH__SERVICE_AUDIENCE']);
  });

  it('names every bad variable in one error, in the order of AUTH_ENV_NAMES, then the combinations', () => {
    const error = configError({
      SERVICE__AUTH__REPLAY_PROTECTION: 'maybe',
      SERVICE__AUTH__AUDIENCE: 'same',
      SERVICE__AUTH__SERVICE_AUDIENCE: 'same',
      SERVICE__AUTH__CLOCK_SKEW_SECS: '1.5',
    });
    expect(error.keys).toEqual([
      'SERVICE__AUTH__ISSUER',
      'SERVICE__AUTH__CLOCK_SKEW_SECS',
      'SERVICE__AUTH__REPLAY_PROTECTION',
      'SERVICE__AUTH__JWKS_URL',
      'SERVICE__AUTH__SERVICE_AUDIENCE',
    ]);
    expect(error.message).toBe(
      'SERVICE__AUTH__ISSUER: is required; ' +
        'SERVICE__AUTH__CLOCK_SKEW_SECS: expected a whole number of seconds >= 0, got "1.5"; ' +
        'SERVICE__AUTH__REPLAY_PROTECTION: expected off, service or all, got "maybe"; ' +
        'SERVICE__AUTH__JWKS_URL: set it (or SERVICE__AUTH__INTROSPECTION_URL, or SERVICE__AUTH__HS256_SECRET ' +
        'for local development): no way to check tokens; ' +
        'SERVICE__AUTH__SERVICE_AUDIENCE: must differ from SERVICE__AUTH__AUDIENCE, ' +
        'or a user token could pass as a service token',
    );
  });

  it('refuses a key set address that is not a URL without also asking for one', () => {
    expect(configError({ ...minimal, SERVICE__AUTH__JWKS_URL: 'not a url' }).message).toBe(
      'SERVICE__AUTH__JWKS_URL: expected an https:// URL, got "not a url"',
    );
  });
});

describe('auth environment helpers', () => {
  it('lists every SERVICE__AUTH__ variable and picks the set ones', () => {
    expect(AUTH_ENV_NAMES).toContain('SERVICE__AUTH__JWKS_CACHE_TTL');
    expect(AUTH_ENV_NAMES).toHaveLength(14);
    expect(pickAuthEnv({ ...minimal, SERVICE__AUTH__AUDIENCE: '', PATH: '/bin' })).toEqual(minimal);
  });
});

describe('authConfig', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    resetAuthConfigForTests();
  });

  it('reads process.env once and caches the result', () => {
    Object.assign(process.env, minimal);
    const first = authConfig();
    process.env.SERVICE__AUTH__ISSUER = 'https://changed.example.com';
    expect(authConfig()).toBe(first);
    expect(first.issuer).toBe('https://idp.example.com');
  });

  it('throws the ConfigError when process.env is incomplete', () => {
    for (const name of AUTH_ENV_NAMES) delete process.env[name];
    expect(() => authConfig()).toThrow(ConfigError);
  });
});

describe('setting readers', () => {
  const NAME = 'NOTIFY_WS_IDLE_TIMEOUT_SECS';

  it('give the fallback when a setting is unset, empty or blank', () => {
    expect(positiveSecondsSetting(NAME, 45, {})).toBe(45);
    expect(positiveSecondsSetting(NAME, 45, { [NAME]: '' })).toBe(45);
    expect(positiveIntegerSetting(NAME, 16, { [NAME]: '' })).toBe(16);
    expect(positiveNumberSetting(NAME, 2, { [NAME]: ' ' })).toBe(2);
    expect(durationListSetting(NAME, [5, 300], { [NAME]: ' \t' })).toEqual([5, 300]);
  });

  it('read positive numbers with fractions, refusing others by name', () => {
    expect(positiveNumberSetting(NAME, 2, { [NAME]: ' 2.5 ' })).toBe(2.5);
    for (const raw of ['0', '-1', 'soon', 'Infinity']) {
      expect(() => positiveNumberSetting(NAME, 2, { [NAME]: raw })).toThrow(
        `${NAME} must be a positive number`,
      );
    }
  });

  it('read a list of durations: ms, s, m, h, d in any case, fractions, plain seconds', () => {
    expect(durationListSetting(NAME, [], { [NAME]: '250ms, 1.5S,2m ,1h,1d,7' })).toEqual([
      0.25, 1.5, 120, 3600, 86400, 7,
    ]);
    for (const raw of ['1s,,2s', '-5s', '1w', '.5s', 'soon']) {
      expect(() => durationListSetting(NAME, [], { [NAME]: raw }), raw).toThrow(
        `${NAME} must be durations like 5s, 5m or 2h separated by commas`,
      );
    }
  });

  it('read seconds with fractions, and whole counts', () => {
    expect(positiveSecondsSetting(NAME, 45, { [NAME]: '0.5' })).toBe(0.5);
    expect(positiveIntegerSetting(NAME, 16, { [NAME]: '32' })).toBe(32);
  });

  it('refuse what is not such a value, naming the variable', () => {
    for (const raw of ['0', '-1', 'soon', 'Infinity']) {
      expect(() => positiveSecondsSetting(NAME, 45, { [NAME]: raw })).toThrow(
        `${NAME} must be a positive number of seconds`,
      );
    }
    for (const raw of ['0', '1.5', 'many']) {
      expect(() => positiveIntegerSetting(NAME, 16, { [NAME]: raw })).toThrow(
        `${NAME} must be a positive integer`,
      );
    }
  });

  it('keep a bounded count within its bounds', () => {
    expect(boundedIntegerSetting(NAME, 4, 100, { [NAME]: '100' })).toBe(100);
    expect(() => boundedIntegerSetting(NAME, 4, 100, { [NAME]: '101' })).toThrow(
      `${NAME} must be an integer from 1 to 100`,
    );
  });

  it('read a flag as on only for true, 1, yes or on', () => {
    expect(['true', ' YES ', '1', 'on'].map((raw) => flagSetting(NAME, { [NAME]: raw }))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['false', '0', '', 'enabled'].map((raw) => flagSetting(NAME, { [NAME]: raw }))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(flagSetting(NAME, {})).toBe(false);
  });
});
