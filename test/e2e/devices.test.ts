import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
let run = 0;

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
});
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);

let seq = 0;
const deviceToken = () => {
  seq += 1;
  return `device-${run}-${seq}`;
};
const tokenOf = (name: string) => runtime.mintUserToken(`${name}-${run}`);

describe('devices', () => {
  it('registers (201), lists one’s own, and updates a token registered again', async () => {
    const alice = await tokenOf('alice');
    const token = deviceToken();
    const created = await api('POST', '/devices', alice, { token, platform: 'ios', app_id: 'com.example' });
    expect(created).toEqual({
      status: 201,
      body: { token, platform: 'ios', app_id: 'com.example', created_at: expect.any(String) },
    });
    const updated = await api('POST', '/devices', alice, {
      token,
      platform: 'ios',
      app_id: 'com.example.beta',
    });
    expect(updated).toEqual({ status: 201, body: { ...created.body, app_id: 'com.example.beta' } });
    expect((await api('GET', '/devices', alice)).body).toEqual({ items: [updated.body], next_cursor: null });
  });

  it('moves a token registered by another user (one owner per token)', async () => {
    const [alice, bob] = [await tokenOf('alice2'), await tokenOf('bob2')];
    const token = deviceToken();
    await api('POST', '/devices', alice, { token, platform: 'android' });
    const moved = await api('POST', '/devices', bob, { token, platform: 'android' });
    expect(moved.status).toBe(201);
    expect((await api('GET', '/devices', bob)).body.items).toEqual([moved.body]);
    expect((await api('GET', '/devices', alice)).body.items).toEqual([]);
  });

  it('deletes only one’s own token (204); another’s or an unknown one is 404', async () => {
    const [carol, dave] = [await tokenOf('carol'), await tokenOf('dave')];
    const token = deviceToken();
    await api('POST', '/devices', carol, { token, platform: 'web' });
    expect((await api('DELETE', '/devices', dave, { token })).status).toBe(404);
    expect((await api('DELETE', '/devices', carol, { token: deviceToken() })).status).toBe(404);
    expect((await api('GET', '/devices', carol)).body.items).toHaveLength(1);
    expect(await api('DELETE', '/devices', carol, { token })).toEqual({ status: 204, body: undefined });
    expect((await api('GET', '/devices', carol)).body.items).toEqual([]);
  });

  it('validates the body (400) and needs a user token (401 without, 403 for a service)', async () => {
    const alice = await tokenOf('alice3');
    expect((await api('POST', '/devices', alice, { token: deviceToken(), platform: 'symbian' })).status).toBe(
      400,
    );
    expect((await api('POST', '/devices', alice, { platform: 'ios' })).status).toBe(400);
    expect((await api('DELETE', '/devices', alice, {})).status).toBe(400);
    expect((await api('GET', '/devices', undefined)).status).toBe(401);
    const service = await runtime.mintServiceToken('push', ['notifications:write']);
    expect((await api('POST', '/devices', service, { token: deviceToken(), platform: 'ios' })).status).toBe(
      403,
    );
  });
});
