/**
 * `npm run token`: mints development tokens with the HS256 secret `npm start` uses.
 *
 *   npm run -s token -- --user alice [--roles admin]
 *   npm run -s token -- --service billing --scope "notifications:write events:publish"
 *
 * The secret and issuer come from SERVICE__AUTH__* when set, else from the file `npm start` writes (in the
 * `--data DIR` it was given, else .data/). Prints only the token, so `TOKEN=$(npm run -s token -- --user alice)`
 * works; without `-s` npm prints its own header into that output first, so the command refuses instead.
 */
import { AUTH_SETTING_PREFIX } from '../../common/env';
import { describeBound, withinBound } from '../../lambdas/core/identifiers';
import {
  DEV_AUDIENCE,
  DEV_SERVICE_AUDIENCE,
  devAuthFile,
  type Hs256Settings,
  mintServiceToken,
  mintUserToken,
  readDevAuth,
} from '../dev-auth';
import { fail, npmHeaderInCapturedOutput, parseCliArgs } from './args';

const USAGE =
  'npm run -s token -- --user ID [--roles admin,...] | --service NAME [--scope "events:publish ..."] [--ttl SECONDS] [--data DIR]';
const DETAILS = `Prints a development token (HS256) on stdout, nothing else.
  --user ID        a user token with sub ID; --roles adds roles (comma or space separated)
  --service NAME   a service token; --scope lists its scopes (space separated; none by default)
  --ttl SECONDS    lifetime, default 3600
  --data DIR       the data directory of \`npm start -- --data DIR\` (or NOTIFY_DATA_DIR): its dev-auth.json
The secret is SERVICE__AUTH__HS256_SECRET when set (with SERVICE__AUTH__ISSUER, _AUDIENCE, _SERVICE_AUDIENCE),
else the one \`npm start\` saved. Use \`npm run -s\`: without -s npm prints a header before the token.`;

const args = parseCliArgs(
  {
    user: { type: 'string' },
    roles: { type: 'string' },
    service: { type: 'string' },
    scope: { type: 'string' },
    ttl: { type: 'string' },
    data: { type: 'string' },
  },
  USAGE,
  DETAILS,
);
if (npmHeaderInCapturedOutput('token')) {
  fail(
    'npm has printed its "> notify@… token" header into this output, so it would not be a token: ' +
      'run `npm run -s token -- …` (-s keeps npm quiet)',
  );
}
const user = args.user as string | undefined;
const service = args.service as string | undefined;
if (Boolean(user) === Boolean(service)) fail(`give exactly one of --user or --service\nusage: ${USAGE}`);
// A token the service would refuse (401) is no use: say so here, with the rule.
if (user !== undefined && !withinBound('userId', user)) fail(`--user must be ${describeBound('userId')}`);
if (service !== undefined && !withinBound('serviceName', service))
  fail(`--service must be ${describeBound('serviceName')}`);
const ttlText = (args.ttl as string | undefined) ?? '3600';
if (!/^\d{1,7}$/.test(ttlText) || Number(ttlText) < 1)
  fail(`--ttl must be a number of seconds, got ${ttlText}`);

const env = (key: string) => process.env[`${AUTH_SETTING_PREFIX}${key}`]?.trim() || undefined;
const dataDir = (args.data as string | undefined) ?? (process.env.NOTIFY_DATA_DIR || undefined);
const saved = readDevAuth(devAuthFile(dataDir));
const secret = env('HS256_SECRET') ?? saved?.secret;
if (!secret) {
  fail(
    `no HS256 secret: run npm start${dataDir ? ` -- --data ${dataDir}` : ''} once (it writes ` +
      `${devAuthFile(dataDir)}) or set ${AUTH_SETTING_PREFIX}HS256_SECRET`,
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
