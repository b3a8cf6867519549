/**
 * Push apps given to the local runtime (SERVICE__PUSH__APPS in `env` or the process) replace the stand-ins' app
 * `local` whole, its default included, while the stand-ins still run: a test or a developer decides the apps.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pushSettingName } from '../../../common/env';
import { apiClient } from '../../support/api';
import { recordingStandIn } from '../../support/recording-push-stand-in';
import { type Runtime, startTestRuntime } from '../../support/runtime';

let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  runtime = await startTestRuntime({
    pushStandIns: [recordingStandIn('fcm')],
    env: { [pushSettingName('APPS')]: JSON.stringify({ given: { apns: { credentials: {} } } }) },
  });
});
afterAll(() => runtime?.stop());

it('registers against the given apps only (the one given app is the default), the stand-ins running', async () => {
  expect(runtime.standIns.push.map((standIn) => standIn.provider)).toEqual(['fcm']);
  const user = await runtime.mintUserToken('given-apps');
  expect(await api('POST', '/devices', user, { token: 'ios-1', platform: 'ios' })).toMatchObject({
    status: 201,
    body: { provider: 'apns', app_id: null },
  });
  const fcm = await api('POST', '/devices', user, { token: 'android-1', platform: 'android' });
  expect(fcm).toMatchObject({ status: 400, body: { details: [{ field: 'provider' }] } });
  const local = await api('POST', '/devices', user, {
    token: 'android-2',
    platform: 'android',
    app_id: 'local',
  });
  expect(local).toMatchObject({ status: 400, body: { details: [{ field: 'app_id' }] } });
});
