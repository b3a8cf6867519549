import { describe, expect, it } from 'vitest';
import { parsePushSettings } from '../../../common/settings';
import { ServiceError } from '../../../lambdas/core/errors';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { deleteDevice, listDevices, registerDevice } from '../../../lambdas/domain/devices/devices';
import { registerDeviceSchema } from '../../../lambdas/domain/devices/schema';
import { useDynamoDbLocal } from '../../support/dynamodb';

useDynamoDbLocal();

let seq = 0;
const unique = (prefix: string) => {
  seq += 1;
  return `${prefix}-${Date.now()}-${seq}`;
};

const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (error instanceof ServiceError ? error.status : error),
  );

describe('device bodies', () => {
  it('accepts the three platforms and refuses anything else', () => {
    for (const platform of ['ios', 'android', 'web']) {
      expect(parseOrThrow(registerDeviceSchema, { token: 't', platform })).toEqual({ token: 't', platform });
    }
    expect(() => parseOrThrow(registerDeviceSchema, { token: 't', platform: 'windows' })).toThrow(
      ServiceError,
    );
    expect(() => parseOrThrow(registerDeviceSchema, { token: '', platform: 'ios' })).toThrow(ServiceError);
    expect(() => parseOrThrow(registerDeviceSchema, { token: 't', platform: 'ios', x: 1 })).toThrow(
      ServiceError,
    );
  });
});

/** Two apps with every provider but Web Push (a web endpoint must be a reachable URL). */
const settings = parsePushSettings({
  SERVICE__PUSH__APPS: JSON.stringify({
    'com.example': { apns: { secret: 'a' }, fcm: { secret: 'f' } },
    'other-app': { apns: { secret: 'a' }, fcm: { secret: 'f' } },
  }),
  SERVICE__PUSH__DEFAULT_APP: 'com.example',
});

describe('devices', () => {
  it('registers a token and lists it for its owner only', async () => {
    const [alice, bob] = [unique('alice'), unique('bob')];
    const token = unique('tok');
    const device = await registerDevice(alice, { token, platform: 'ios', app_id: 'com.example' }, settings);
    expect(device).toEqual({
      token,
      platform: 'ios',
      provider: 'apns',
      app_id: 'com.example',
      apns_environment: 'production',
      web_keys: null,
      created_at: expect.any(String),
    });
    expect((await listDevices(alice, { limit: 100 })).items).toEqual([device]);
    expect((await listDevices(bob, { limit: 100 })).items).toEqual([]);
  });

  it('updates a token registered again by its owner and keeps created_at', async () => {
    const alice = unique('alice');
    const token = unique('tok');
    const first = await registerDevice(alice, { token, platform: 'android' }, settings);
    expect(first.app_id).toBeNull();
    const second = await registerDevice(alice, { token, platform: 'ios', app_id: 'other-app' }, settings);
    expect(second).toEqual({
      ...first,
      platform: 'ios',
      provider: 'apns',
      apns_environment: 'production',
      app_id: 'other-app',
    });
    expect((await listDevices(alice, { limit: 100 })).items).toEqual([second]);
  });

  it('moves a token registered by another user: one owner per token', async () => {
    const [alice, bob] = [unique('alice'), unique('bob')];
    const token = unique('tok');
    await registerDevice(alice, { token, platform: 'ios' }, settings);
    const kept = await registerDevice(alice, { token: unique('other'), platform: 'ios' }, settings);
    const moved = await registerDevice(bob, { token, platform: 'ios' }, settings);
    expect((await listDevices(bob, { limit: 100 })).items).toEqual([moved]);
    expect((await listDevices(alice, { limit: 100 })).items).toEqual([kept]);
    expect(await statusOf(deleteDevice(alice, token))).toBe(404);
  });

  it('deletes only one’s own token; unknown or another’s is 404', async () => {
    const [alice, bob] = [unique('alice'), unique('bob')];
    const token = unique('tok');
    await registerDevice(alice, { token, platform: 'ios' }, settings);
    expect(await statusOf(deleteDevice(bob, token))).toBe(404);
    expect(await statusOf(deleteDevice(alice, unique('unknown')))).toBe(404);
    expect((await listDevices(alice, { limit: 100 })).items).toHaveLength(1);
    expect(await statusOf(deleteDevice(alice, token))).toBe('resolved');
    expect((await listDevices(alice, { limit: 100 })).items).toEqual([]);
    expect(await statusOf(deleteDevice(alice, token))).toBe(404);
  });
});
