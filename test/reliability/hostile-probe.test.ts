/**
 * Reliability suite, hostile probe: what a tester with raw HTTP found the service accepting or failing on, each
 * case over real HTTP on the local runtime (docs/reliability.md, "Hostile input"). Every case here failed
 * before its fix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJsonText } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;

beforeAll(async () => {
  runtime = await startTestRuntime();
}, 90_000);
afterAll(() => runtime?.stop());

const postText = (path: string, token: string, text: string) =>
  postJsonText(runtime.httpUrl, path, token, text);

const fieldsOf = (body: { details?: { field: string }[] }) =>
  (body.details ?? []).map((detail) => detail.field);

describe('numbers JSON parses to Infinity', () => {
  it('are a 400 on the field, on every route taking free-form JSON (were a 500, or a 202 that became null)', async () => {
    const writer = await runtime.mintServiceToken('inf', ['notifications:write', 'events:publish']);
    const broadcaster = await runtime.mintServiceToken('inf', ['broadcast:write']);
    const bodies = {
      '/notifications': (data: string) =>
        `{"event_type":"inf.test","title":"inf","recipient_ids":["inf-user"],"data":${data}}`,
      '/events': (data: string) => `{"event_type":"inf.test","source":"inf","version":1,"data":${data}}`,
      '/broadcast': (data: string) => `{"channel":"room:inf","payload":{"type":"x","data":${data}}}`,
    } as const;
    for (const [data, field] of [
      ['{"n":1e400}', 'data.n'],
      ['{"n":-1e309}', 'data.n'],
      ['{"list":[0,{"deep":[1E999]}]}', 'data.list[1].deep[0]'],
    ] as const) {
      for (const [path, body] of Object.entries(bodies)) {
        const response = await postText(path, path === '/broadcast' ? broadcaster : writer, body(data));
        expect(response.status, `${path} ${data}`).toBe(400);
        expect(response.body).toMatchObject({ code: 'validation' });
        expect(fieldsOf(response.body), `${path} ${data}`).toEqual([
          path === '/broadcast' ? `payload.${field}` : field,
        ]);
      }
    }
    // The broadcast payload is itself free-form, and typed numbers refuse it too.
    for (const [path, token, body, field] of [
      ['/broadcast', broadcaster, '{"channel":"room:inf","payload":{"type":"x","n":1e400}}', 'payload.n'],
      ['/events', writer, '{"event_type":"inf.test","source":"inf","version":1e400,"data":{}}', 'version'],
    ] as const) {
      const response = await postText(path, token, body);
      expect(response, body).toMatchObject({ status: 400, body: { code: 'validation' } });
      expect(fieldsOf(response.body), body).toEqual([field]);
    }
  });
});
