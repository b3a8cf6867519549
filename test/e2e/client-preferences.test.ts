import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotifyApi, NotifyError } from '../../client/src/index';
import { NotifyService } from '../../client/src/service';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
let run = 0;
let service: NotifyService;

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
  service = new NotifyService({
    apiUrl: runtime.httpUrl,
    token: await runtime.mintServiceToken('sdk', ['notifications:write']),
  });
}, 90_000);
afterAll(() => runtime?.stop());

const apiFor = (userId: string) =>
  new NotifyApi({ apiUrl: runtime.httpUrl, getToken: () => runtime.mintUserToken(userId) });

describe('client SDK: preferences', () => {
  it('a user sets and reads its preferences; required types are refused with the service’s details', async () => {
    const userId = `sdk-user-${run}`;
    const api = apiFor(userId);
    expect((await api.getPreferences()).updated_at).toBeNull();
    const stored = await api.setPreferences({
      rules: [{ event_type: 'marketing.*', channels: { toast: false } }],
      muted_topics: ['news'],
    });
    expect(await api.getPreferences()).toEqual(stored);
    expect(await service.getPreferences(userId)).toEqual(stored);

    const prefix = `sdk${run}`;
    const defaults = await service.setPreferenceDefaults({
      rules: [{ event_type: `${prefix}.*`, required: true }],
    });
    expect(await api.getPreferenceDefaults()).toEqual(defaults);
    const refused = await api
      .setPreferences({ rules: [{ event_type: `${prefix}.login`, channels: { in_app: false } }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NotifyError);
    expect(refused).toMatchObject({
      code: 'validation',
      status: 400,
      details: [{ field: 'rules[0].event_type' }],
    });
    await service.setPreferenceDefaults({ rules: [] });
    expect((await service.setPreferences(userId, { rules: [] })).rules).toEqual([]);
  });

  it('listDevices returns every device of the user', async () => {
    const api = apiFor(`sdk-devices-${run}`);
    for (const token of ['a', 'b', 'c'])
      await api.registerDevice({ token: `${token}-${run}`, platform: 'android' });
    expect((await api.listDevices()).map((device) => device.token).sort()).toEqual(
      ['a', 'b', 'c'].map((token) => `${token}-${run}`),
    );
  });
});
