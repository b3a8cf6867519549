import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushSettingName } from '../../../common/env';
import { apiClient } from '../../support/api';
import { vapidCredentials } from '../../support/push-keys';
import { type Runtime, startTestRuntime } from '../../support/runtime';

let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);

const webApp = vapidCredentials();
const otherWebApp = vapidCredentials();

beforeAll(async () => {
  runtime = await startTestRuntime({
    env: {
      [pushSettingName('APPS')]: JSON.stringify({
        web: { webpush: { credentials: webApp } },
        'web.beta': { webpush: { credentials: otherWebApp } },
        phones: { fcm: { credentials: { project_id: 'p' } } },
      }),
      [pushSettingName('DEFAULT_APP')]: 'web',
    },
  });
});
afterAll(() => runtime?.stop());

describe('GET /push/vapid-public-key', () => {
  it('answers the app’s public key (the default app without app_id) to users and services', async () => {
    const user = await runtime.mintUserToken('vapid-user');
    expect(await api('GET', '/push/vapid-public-key', user)).toEqual({
      status: 200,
      body: { app_id: 'web', public_key: webApp.public_key },
    });
    expect(await api('GET', '/push/vapid-public-key?app_id=web.beta', user)).toEqual({
      status: 200,
      body: { app_id: 'web.beta', public_key: otherWebApp.public_key },
    });
    const service = await runtime.mintServiceToken('site', []);
    expect((await api('GET', '/push/vapid-public-key', service)).body.public_key).toBe(webApp.public_key);
  });

  it('400 naming app_id for an unknown app, 404 for an app without Web Push, 401 without a token', async () => {
    const user = await runtime.mintUserToken('vapid-user2');
    const unknown = await api('GET', '/push/vapid-public-key?app_id=nope', user);
    expect(unknown).toMatchObject({
      status: 400,
      body: { code: 'validation', details: [{ field: 'app_id' }] },
    });
    const phones = await api('GET', '/push/vapid-public-key?app_id=phones', user);
    expect(phones).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(phones.body.message).toContain('phones has no webpush credentials');
    expect((await api('GET', '/push/vapid-public-key')).status).toBe(401);
  });
});
