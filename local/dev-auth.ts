import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SignJWT } from 'jose';
import { AUTH_SETTING_PREFIX } from '../common/env';
import { REPO_ROOT } from './lambda/runner';

/**
 * Development auth of the local runtime: an HS256 secret, kept in `dev-auth.json` so tokens minted by
 * `npm run token` stay valid across restarts of `npm start`: in the data directory of `--data DIR`, else in
 * the repository's `.data/` (ignored by git).
 */
export const DEV_AUTH_FILE = resolve(REPO_ROOT, '.data', 'dev-auth.json');

/**
 * The dev auth file in effect: NOTIFY_DEV_AUTH_FILE (tests point it elsewhere), else `dataDir`/dev-auth.json
 * when the runtime keeps its data there, else DEV_AUTH_FILE.
 */
export const devAuthFile = (dataDir?: string): string =>
  process.env.NOTIFY_DEV_AUTH_FILE || (dataDir ? resolve(dataDir, 'dev-auth.json') : DEV_AUTH_FILE);

export const DEV_AUDIENCE = 'notify';
export const DEV_SERVICE_AUDIENCE = 'notify.s2s';
export const ALL_SCOPES = [
  'events:publish',
  'notifications:write',
  'webhooks:admin',
  'broadcast:write',
] as const;

/** What a token minter needs: the HS256 secret and the claims the service checks. */
export interface Hs256Settings {
  readonly secret: string;
  readonly issuer: string;
  readonly audience: string;
  readonly serviceAudience: string;
}

export const newDevSecret = (): string => randomBytes(48).toString('base64url');

/** Reads the persisted dev settings; undefined when `npm start` has not written them yet. */
export const readDevAuth = (file = devAuthFile()): Hs256Settings | undefined => {
  if (!existsSync(file)) return undefined;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Hs256Settings>;
  if (!parsed.secret || !parsed.issuer) return undefined;
  return {
    secret: parsed.secret,
    issuer: parsed.issuer,
    audience: parsed.audience ?? DEV_AUDIENCE,
    serviceAudience: parsed.serviceAudience ?? DEV_SERVICE_AUDIENCE,
  };
};

export const writeDevAuth = (settings: Hs256Settings, file = devAuthFile()): void => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
};

/** True when any `SERVICE__AUTH__*` variable is set (non-blank) in `env`. */
export const hasAuthSettings = (env: Record<string, string | undefined>): boolean =>
  Object.entries(env).some(
    ([name, value]) => name.startsWith(AUTH_SETTING_PREFIX) && (value ?? '').trim() !== '',
  );

/** HS256 settings from `SERVICE__AUTH__*` variables; undefined when no HS256 secret is among them. */
export const hs256FromEnv = (env: Record<string, string | undefined>): Hs256Settings | undefined => {
  const secret = env[`${AUTH_SETTING_PREFIX}HS256_SECRET`]?.trim();
  const issuer = env[`${AUTH_SETTING_PREFIX}ISSUER`]?.trim();
  if (!secret || !issuer) return undefined;
  return {
    secret,
    issuer,
    audience: env[`${AUTH_SETTING_PREFIX}AUDIENCE`]?.trim() || DEV_AUDIENCE,
    serviceAudience: env[`${AUTH_SETTING_PREFIX}SERVICE_AUDIENCE`]?.trim() || DEV_SERVICE_AUDIENCE,
  };
};

export interface UserTokenOptions {
  readonly roles?: readonly string[];
  /** Default 1 hour. */
  readonly expiresInSecs?: number;
}

const sign = (
  settings: Hs256Settings,
  claims: Record<string, unknown>,
  audience: string,
  expiresInSecs: number,
) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(settings.issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setJti(randomUUID())
    .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSecs)
    .sign(new TextEncoder().encode(settings.secret));

export const mintUserToken = (settings: Hs256Settings, sub: string, options: UserTokenOptions = {}) =>
  sign(
    settings,
    { sub, ...(options.roles?.length ? { roles: [...options.roles] } : {}) },
    settings.audience,
    options.expiresInSecs ?? 3600,
  );

export const mintServiceToken = (
  settings: Hs256Settings,
  service: string,
  scopes: readonly string[],
  options: { readonly expiresInSecs?: number } = {},
) =>
  sign(
    settings,
    { sub: service, service, scope: scopes.join(' ') },
    settings.serviceAudience,
    options.expiresInSecs ?? 3600,
  );
