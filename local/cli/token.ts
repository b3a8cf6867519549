/**
 * `npm run token`: mints development tokens with the HS256 secret `npm start` uses.
 *
 *   npm run token -- --user alice [--roles admin]
 *   npm run token -- --service billing --scope "notifications:write events:publish"
 *
 * The secret and issuer come from SERVICE__AUTH__* when set, else from the file `npm start` writes.
 * Prints only the token, so `TOKEN=$(npm run -s token -- --user alice)` works.
 */
import {
  AUTH_ENV_PREFIX,
  DEV_AUDIENCE,
  DEV_SERVICE_AUDIENCE,
  devAuthFile,
  type Hs256Settings,
  mintServiceToken,
  mintUserToken,
  readDevAuth,
} from '../dev-auth';
import { fail, parseCliArgs } from './args';

const USAGE =
  'npm run token -- --user ID [--roles admin,...] | --service NAME [--scope "events:publish ..."] [--ttl SECONDS]';

const args = parseCliArgs(
  {
    user: { type: 'string' },
    roles: { type: 'string' },
    service: { type: 'string' },
    scope: { type: 'string' },
    ttl: { type: 'string' },
  },
  USAGE,
);
const user = args.user as string | undefined;
const service = args.service as string | undefined;
if (Boolean(user) === Boolean(service)) fail(`give exactly one of --user or --service\nusage: ${USAGE}`);
const ttlText = (args.ttl as string | undefined) ?? '3600';
if (!/^\d{1,7}$/.test(ttlText) || Number(ttlText) < 1)
  fail(`--ttl must be a number of seconds, got ${ttlText}`);

const env = (key: string) => process.env[`${AUTH_ENV_PREFIX}${key}`]?.trim() || undefined;
const saved = readDevAuth();
const secret = env('HS256_SECRET') ?? saved?.secret;
if (!secret) {
  fail(
    `no HS256 secret: run npm start once (it writes ${devAuthFile()}) or set ${AUTH_ENV_PREFIX}HS256_SECRET`,
  );
}
const settings: Hs256Settings = {
  secret: secret as string,
  issuer: env('ISSUER') ?? saved?.issuer ?? 'http://127.0.0.1:3000',
  audience: env('AUDIENCE') ?? saved?.audience ?? DEV_AUDIENCE,
  serviceAudience: env('SERVICE_AUDIENCE') ?? saved?.serviceAudience ?? DEV_SERVICE_AUDIENCE,
};
const expiresInSecs = Number(ttlText);
const split = (text: string | undefined, separator: RegExp) =>
  (text ?? '').split(separator).filter((part) => part.trim() !== '');

const token = user
  ? await mintUserToken(settings, user, {
      roles: split(args.roles as string | undefined, /[\s,]+/),
      expiresInSecs,
    })
  : await mintServiceToken(settings, service as string, split(args.scope as string | undefined, /\s+/), {
      expiresInSecs,
    });
process.stdout.write(`${token}\n`);
