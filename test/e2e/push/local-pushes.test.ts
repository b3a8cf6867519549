/**
 * The local push plumbing over real HTTP: the runtime starts the stand-ins it is given, makes their generated
 * credentials the one local app's (so registration accepts those providers and no other app), and shows a user
 * what the stand-ins received for that user's devices, through the demo endpoints and `npm run pushes`, with a
 * token marked dead answered as dead from then on. The providers' own stand-ins and senders are tested in their
 * own files; here a recording stand-in (test/support) stands for them and the test sends to it as a sender would.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PUSH_DEAD_PATH, DEMO_PUSHES_PATH } from '../../../local/demo/server';
import { REPO_ROOT } from '../../../local/lambda/runner';
import { apiClient } from '../../support/api';
import { launchBrowser, type TestBrowser } from '../../support/browser';
import { recordingStandIn } from '../../support/recording-push-stand-in';
import { type Runtime, startTestRuntime } from '../../support/runtime';

let runtime: Runtime;
let browser: TestBrowser | undefined;
const api = apiClient(() => runtime.httpUrl);
const run = promisify(execFile);

beforeAll(async () => {
  runtime = await startTestRuntime({
    demo: true,
    pushStandIns: [recordingStandIn('fcm'), recordingStandIn('expo')],
  });
});
afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
});

const local = (path: string, token: string | undefined, init: RequestInit = {}) =>
  fetch(`${new URL(runtime.httpUrl).origin}${path}`, {
    ...init,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
  });

/** What a sender does: one push to the provider's stand-in. */
const send = (provider: string, token: string, title: string) => {
  const standIn = runtime.standIns.push.find((candidate) => candidate.provider === provider);
  if (!standIn) throw new Error(`no ${provider} stand-in`);
  return fetch(`${standIn.url}/send`, {
    method: 'POST',
    body: JSON.stringify({ token, push_id: `push-${title}`, payload: { title } }),
  });
};

describe('local push stand-ins', () => {
  it('run with generated credentials that make the local app, the only one registration accepts', async () => {
    expect(runtime.standIns.push.map((standIn) => standIn.provider)).toEqual(['fcm', 'expo']);
    const user = await runtime.mintUserToken('push-local-1');
    const fcm = await api('POST', '/devices', user, { token: 'fcm-1', platform: 'android' });
    expect(fcm).toMatchObject({ status: 201, body: { provider: 'fcm', app_id: null } });
    expect(
      (await api('POST', '/devices', user, { token: 'fcm-2', platform: 'android', app_id: 'local' })).status,
    ).toBe(201);
    // No APNs stand-in runs, so the local app has no APNs credentials.
    const apns = await api('POST', '/devices', user, { token: 'apns-1', platform: 'ios' });
    expect(apns).toMatchObject({ status: 400, body: { details: [{ field: 'provider' }] } });
    const other = await api('POST', '/devices', user, {
      token: 'fcm-3',
      platform: 'android',
      app_id: 'other',
    });
    expect(other).toMatchObject({ status: 400, body: { details: [{ field: 'app_id' }] } });
  });

  it('show a user the pushes to their own devices only, and mark one of their tokens dead', async () => {
    const [alice, bob] = [await runtime.mintUserToken('push-alice'), await runtime.mintUserToken('push-bob')];
    await api('POST', '/devices', alice, { token: 'alice-phone', platform: 'android' });
    await api('POST', '/devices', alice, {
      token: 'ExponentPushToken[alice]',
      platform: 'ios',
      provider: 'expo',
    });
    await api('POST', '/devices', bob, { token: 'bob-phone', platform: 'android' });
    for (const [provider, token, title] of [
      ['fcm', 'alice-phone', 'one'],
      ['fcm', 'bob-phone', 'for bob'],
      ['expo', 'ExponentPushToken[alice]', 'two'],
      // Another provider's push to the same token text is not the device's.
      ['expo', 'alice-phone', 'not hers'],
    ] as const)
      expect((await send(provider, token, title)).status).toBe(200);

    const answer = await local(DEMO_PUSHES_PATH, alice);
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as {
      devices: unknown[];
      pushes: { token: string; payload: unknown }[];
    };
    expect(body.devices).toHaveLength(2);
    expect(body.pushes.map((push) => [push.token, push.payload])).toEqual([
      ['alice-phone', { title: 'one' }],
      ['ExponentPushToken[alice]', { title: 'two' }],
    ]);

    // Bob cannot kill Alice's token; Alice can, and the stand-in answers it as dead from then on.
    const refused = await local(DEMO_PUSH_DEAD_PATH, bob, {
      method: 'POST',
      body: JSON.stringify({ token: 'alice-phone' }),
    });
    expect(refused.status).toBe(404);
    expect((await send('fcm', 'alice-phone', 'still alive')).status).toBe(200);
    const marked = await local(DEMO_PUSH_DEAD_PATH, alice, {
      method: 'POST',
      body: JSON.stringify({ token: 'alice-phone' }),
    });
    expect(marked.status).toBe(204);
    expect((await send('fcm', 'alice-phone', 'after')).status).toBe(410);
  });

  it('refuse without a token (401), a bad one as the service does, and a wrong method (405)', async () => {
    expect((await local(DEMO_PUSHES_PATH, undefined)).status).toBe(401);
    expect((await local(DEMO_PUSHES_PATH, 'not-a-token')).status).toBe(401);
    expect((await local(DEMO_PUSHES_PATH, undefined, { method: 'POST' })).status).toBe(405);
    const user = await runtime.mintUserToken('push-local-3');
    const empty = await local(DEMO_PUSH_DEAD_PATH, user, { method: 'POST', body: '{}' });
    expect(empty.status).toBe(400);
  });

  it('npm run pushes prints them, and --mark-dead marks a token dead', async () => {
    const carol = await runtime.mintUserToken('push-carol');
    await api('POST', '/devices', carol, { token: 'carol-phone', platform: 'android' });
    expect((await send('fcm', 'carol-phone', 'hello carol')).status).toBe(200);
    const pushes = (...args: string[]) =>
      // What `npm run pushes` runs, in one Node process (npx and the tsx command would start two more).
      run(
        process.execPath,
        ['--import', 'tsx', 'local/cli/pushes.ts', '--api', runtime.httpUrl, '--token', carol, ...args],
        { cwd: REPO_ROOT, encoding: 'utf8' },
      );
    // Runs that do not depend on each other start together: each is a Node start-up and a TypeScript load.
    const [listed, printedJson] = await Promise.all([pushes(), pushes('--json')]);
    expect(listed.stdout).toContain('1 device(s), 1 push(es)');
    expect(listed.stdout).toContain('fcm      carol-phone  (1 received)');
    expect(listed.stdout).toContain('{"title":"hello carol"}');
    const json = JSON.parse(printedJson.stdout) as { pushes: { push_id: string }[] };
    expect(json.pushes.map((push) => push.push_id)).toEqual(['push-hello carol']);
    const [marked, refused] = await Promise.all([
      pushes('--mark-dead', 'carol-phone'),
      pushes('--mark-dead', 'not-hers').catch((error: { code: number; stderr: string }) => error),
    ]);
    expect((marked as { stdout: string }).stdout).toContain('marked dead: carol-phone');
    expect((await send('fcm', 'carol-phone', 'after')).status).toBe(410);
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toContain('404: No such token among your devices');
  }, 60_000);

  it('the demo inbox’s panel lists the pushes to the demo user’s devices and marks a token dead', async () => {
    browser = await launchBrowser();
    const user = 'push-demo-user';
    const token = await runtime.mintUserToken(user);
    await api('POST', '/devices', token, { token: 'demo-phone', platform: 'android' });
    expect((await send('fcm', 'demo-phone', 'to the panel')).status).toBe(200);
    const page = await browser.context.newPage();
    await page.goto(`${runtime.demoUrl}?user=${user}`);
    await page.locator('#pushes-refresh').click();
    const device = page.locator('#push-devices li[data-token="demo-phone"]');
    await expect.poll(() => device.textContent()).toContain('fcm demo-phone (1 received)');
    expect(await page.locator('#pushes li[data-push-id="push-to the panel"]').textContent()).toContain(
      '{"title":"to the panel"}',
    );
    await device.locator('button').click();
    await page.locator('#activity li[data-kind="push"][data-token="demo-phone"]').waitFor();
    expect((await send('fcm', 'demo-phone', 'after')).status).toBe(410);
  }, 60_000);
});
