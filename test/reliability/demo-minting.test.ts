/**
 * Reliability suite, the demo's local-only endpoints (docs/demo.md) under each auth setting of `npm start`, over
 * real HTTP: they mint tokens only with the development secret the runtime generated, which no one else holds.
 * With a secret from SERVICE__AUTH__* (which a development stage may share) or a JWKS, `POST /demo/api/token
 * {"user_id":"victim"}` from any page handed out that secret's tokens: both endpoints answer 404. The generated
 * secret runs in this process; the two configured ones as `npm start` in a child process each (one runtime per
 * process), one after the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api';
import { type JwksServer, startJwksServer } from '../support/jwks-server';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process';
import { authEnvFor, TEST_HS256_SECRET, userToken } from '../support/tokens';

const work = mkdtempSync(join(tmpdir(), 'notify-demo-minting-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `npm start` with `env` as its auth settings, for the describe that calls it; its REST and demo APIs. */
const configuredRuntime = (name: string, env: () => Record<string, string>) => {
  let child: RuntimeProcess | undefined;
  beforeAll(async () => {
    child = await startRuntimeProcess({
      work: join(work, name),
      dataDir: join(work, name, 'data'),
      env: env(),
    });
  }, 180_000);
  afterAll(() => child?.stop());
  const origin = () => `http://127.0.0.1:${child?.port}`;
  return {
    api: apiClient(() => `${origin()}/api/v1`),
    demoApi: apiClient(() => `${origin()}/demo/api`),
  };
};

/** Both endpoints, as a page of any origin would call them: 404 with a message saying where tokens come from. */
const expectNoMinting = async (demoApi: ReturnType<typeof apiClient>) => {
  for (const [path, body] of [
    ['/token', { user_id: 'victim' }],
    ['/token', { user_id: 'victim', expires_in_secs: 86_400 }],
    ['/notifications', { user_id: 'victim', title: 'Phish' }],
  ] as const) {
    const response = await demoApi('POST', path, undefined, body, { origin: 'https://evil.example' });
    expect(response.status, path).toBe(404);
    expect(response.body, path).toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('npm run token'),
      request_id: expect.any(String),
    });
    expect(response.body.token, path).toBeUndefined();
  }
};

describe('with the development secret the runtime generated', () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ demo: true });
  }, 90_000);
  afterAll(() => runtime?.stop());
  const api = apiClient(() => runtime.httpUrl);
  const demoApi = apiClient(() => `http://127.0.0.1:${runtime.port}/demo/api`);

  it('mints user tokens and sends test notifications', async () => {
    const minted = await demoApi('POST', '/token', undefined, { user_id: 'ellen' });
    expect(minted).toMatchObject({ status: 200, body: { user_id: 'ellen', token: expect.any(String) } });
    expect((await api('GET', '/notifications/unread-count', minted.body.token)).status).toBe(200);
    const sent = await demoApi('POST', '/notifications', undefined, { user_id: 'ellen', title: 'Hi' });
    expect(sent.status).toBe(202);
  });
});

describe('with an HS256 secret from SERVICE__AUTH__*', () => {
  const { api, demoApi } = configuredRuntime('hs256', () => authEnvFor(undefined));

  it('mints nothing: both endpoints answer 404, and tokens of that secret still work', {
    timeout: 60_000,
  }, async () => {
    await expectNoMinting(demoApi);
    // What the demo's user brings instead: a token of the configured secret (`npm run token` mints one).
    const own = await userToken(TEST_HS256_SECRET, { sub: 'ellen' });
    expect((await api('GET', '/notifications/unread-count', own)).status).toBe(200);
  });
});

describe('with a JWKS', () => {
  let idp: JwksServer;
  beforeAll(async () => {
    idp = await startJwksServer({ algs: ['ES256'] });
  });
  afterAll(() => idp?.stop());
  const { api, demoApi } = configuredRuntime('jwks', () => authEnvFor(idp));

  it('mints nothing: both endpoints answer 404, and the IdP tokens work', async () => {
    await expectNoMinting(demoApi);
    const own = await userToken(idp.key('ES256'), { sub: 'ellen' });
    expect((await api('GET', '/notifications/unread-count', own)).status).toBe(200);
  });
});
