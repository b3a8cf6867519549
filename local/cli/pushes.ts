/**
 * `npm run pushes`: what each of a user's devices would have received from the push providers' stand-ins of a
 * running `npm start`, and marking a device token dead to watch it being pruned (docs/push.md, "Locally").
 *
 *   npm run pushes                                    (NOTIFY_API_URL and NOTIFY_USER_TOKEN, as npm start prints them)
 *   npm run pushes -- --token "$(npm run -s token -- --user alice)" [--api http://127.0.0.1:3000/api/v1]
 *   npm run pushes -- --mark-dead <device token>
 */
import { DEMO_PUSH_DEAD_PATH, DEMO_PUSHES_PATH } from '../demo/server';
import type { UserPushes } from '../push/received';
import { fail, parseCliArgs } from './args';

const USAGE = 'npm run pushes -- [--token USER_TOKEN] [--api URL] [--mark-dead DEVICE_TOKEN] [--json]';
const DETAILS = `Lists the pushes the local stand-ins received for the user's registered devices, oldest first.
  --token      the user's token (default NOTIFY_USER_TOKEN; npm run -s token -- --user alice makes one)
  --api        the REST base of the running npm start (default NOTIFY_API_URL, else http://127.0.0.1:3000/api/v1)
  --mark-dead  answer the next push to this device token as its provider answers a dead token (it is then pruned)
  --json       print the answer as JSON`;

const args = parseCliArgs(
  {
    token: { type: 'string' },
    api: { type: 'string' },
    'mark-dead': { type: 'string' },
    json: { type: 'boolean' },
  },
  USAGE,
  DETAILS,
);
const token = (args.token as string | undefined) ?? process.env.NOTIFY_USER_TOKEN;
if (!token)
  fail(`no user token: pass --token or export NOTIFY_USER_TOKEN (npm start prints one)\nusage: ${USAGE}`);
const api = new URL(
  (args.api as string | undefined) ?? process.env.NOTIFY_API_URL ?? 'http://127.0.0.1:3000/api/v1',
);
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

const call = async (path: string, init: RequestInit = {}): Promise<Response> => {
  try {
    const response = await fetch(new URL(path, api.origin), { ...init, headers });
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as { message?: string };
      fail(`${response.status}: ${body.message ?? response.statusText}`);
    }
    return response;
  } catch (error) {
    return fail(`could not reach ${api.origin} (is npm start running?): ${(error as Error).message}`);
  }
};

const markDead = args['mark-dead'] as string | undefined;
if (markDead !== undefined) {
  await call(DEMO_PUSH_DEAD_PATH, { method: 'POST', body: JSON.stringify({ token: markDead }) });
  process.stdout.write(`marked dead: ${markDead} (the next push to it is answered as a dead token)\n`);
} else {
  const answer = (await (await call(DEMO_PUSHES_PATH)).json()) as UserPushes;
  if (args.json) {
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  } else {
    const lines = [`${answer.devices.length} device(s), ${answer.pushes.length} push(es)`];
    for (const device of answer.devices) {
      const count = answer.pushes.filter((push) => push.token === device.token).length;
      lines.push(`  ${device.provider.padEnd(8)} ${device.token}  (${count} received)`);
    }
    for (const push of answer.pushes) {
      lines.push(
        '',
        `${push.at}  ${push.provider}  ${push.token}  push ${push.push_id ?? '-'}`,
        `  ${JSON.stringify(push.payload)}`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
