/**
 * Reliability suite, hostile probe: what a tester with raw HTTP found the service accepting or failing on, each
 * case over real HTTP on the local runtime (docs/reliability.md, "Hostile input"). Every case here failed
 * before its fix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, eventually, postJsonText } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);

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

/** A notification body as JSON text, with `fields` (JSON text) in place of the usual title and data. */
const notificationText = (recipient: string, fields: string) =>
  `{"event_type":"text.test","recipient_ids":["${recipient}"],"channels":["in_app"],${fields}}`;
/** A notification body as JSON text with `data` (JSON text). */
const withData = (data: string) => notificationText('tx', `"title":"t","data":${data}`);

/** Each body POSTed as is: a 400 `validation` naming exactly `field`. */
const expectRefusedOn = async (
  cases: readonly (readonly [path: string, token: string, body: string, field: string])[],
) => {
  for (const [path, token, body, field] of cases) {
    const response = await postText(path, token, body);
    expect(response.status, body).toBe(400);
    expect(response.body).toMatchObject({ code: 'validation' });
    expect(fieldsOf(response.body), body).toEqual([field]);
  }
};

describe('text policy: what breaks a client or a log is refused, the rest round-trips', () => {
  it('refuses lone surrogates (UTF-8 cannot store them) and NUL in any string or key, on every route', async () => {
    const writer = await runtime.mintServiceToken('text', ['notifications:write', 'events:publish']);
    const broadcaster = await runtime.mintServiceToken('text', ['broadcast:write']);
    await expectRefusedOn([
      ['/notifications', writer, notificationText('tx', '"title":"a\\ud800b"'), 'title'],
      ['/notifications', writer, notificationText('tx', '"title":"\\udc00"'), 'title'],
      ['/notifications', writer, notificationText('tx', '"title":"a\\u0000b"'), 'title'],
      ['/notifications', writer, notificationText('tx', '"title":"t","body":"x\\u0000"'), 'body'],
      ['/notifications', writer, withData('{"s":"\\ud83d"}'), 'data.s'],
      ['/notifications', writer, withData('{"l":["ok","\\u0000"]}'), 'data.l[1]'],
      ['/notifications', writer, withData('{"k\\ud800":1}'), 'data'],
      ['/notifications', writer, notificationText('tx\\u0000', '"title":"t"'), 'recipient_ids[0]'],
      ['/events', writer, '{"event_type":"t.t","source":"text","version":1,"data":{"a\\u0000":1}}', 'data'],
      ['/broadcast', broadcaster, '{"channel":"room:tx","payload":{"type":"x","s":"\\udfff"}}', 'payload.s'],
    ]);
  });

  it('refuses control and bidirectional-override characters in names: data keys, recipient ids, room ids', async () => {
    const writer = await runtime.mintServiceToken('text', ['notifications:write']);
    const broadcaster = await runtime.mintServiceToken('text', ['broadcast:write']);
    await expectRefusedOn([
      ['/notifications', writer, withData('{"\\u202eevil":1}'), 'data'],
      ['/notifications', writer, withData('{"a":{"line\\nbreak":1}}'), 'data.a'],
      ['/notifications', writer, notificationText('bob\\u202e', '"title":"t"'), 'recipient_ids[0]'],
      ['/notifications', writer, notificationText('bob\\u2066x', '"title":"t"'), 'recipient_ids[0]'],
      ['/notifications', writer, notificationText('bob\\u001b[31m', '"title":"t"'), 'recipient_ids[0]'],
      ['/broadcast', broadcaster, '{"channel":"room:a\\u202eb","payload":{"type":"x"}}', 'channel'],
    ]);
    const client = await TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken('texter')}`);
    try {
      await client.nextOfType('session');
      for (const room of ['a\u0000b', 'lobby\u202e', 'x\u2067y', 'tab\u0007', '\ud800room']) {
        expect(
          await client.request({ type: 'join.room', room_id: room }),
          JSON.stringify(room),
        ).toMatchObject({
          type: 'error',
          code: 'validation',
        });
      }
      // Emoji sequences (joined by U+200D), accents and right-to-left scripts are names like any other.
      for (const room of ['👩‍💻-team', 'café', 'שלום']) {
        expect(await client.request({ type: 'join.room', room_id: room }), room).toMatchObject({
          type: 'ack',
        });
      }
    } finally {
      await client.close();
    }
  });

  it('accepts the rest as sent and gives it back unchanged: tabs, newlines, bidi text in titles and values', async () => {
    const writer = await runtime.mintServiceToken('text', ['notifications:write']);
    const title = 'שלום \u202bעולם\u202c\tline\nnext 👩‍💻';
    const data = { מפתח: 'value \u202e reversed', emoji: '👩‍💻', tab: 'a\tb', '👍': 1 };
    const created = await api('POST', '/notifications', writer, {
      event_type: 'text.test',
      title,
      body: 'body\r\nwith CRLF',
      recipient_ids: ['texty'],
      data,
    });
    expect(created.status).toBe(202);
    const reader = await runtime.mintUserToken('texty');
    const feed = await eventually(
      () => api('GET', '/notifications', reader),
      (response) => response.body?.items?.length === 1,
    );
    expect(feed.body.items[0]).toMatchObject({ title, body: 'body\r\nwith CRLF', data });
  });
});

describe('limit', () => {
  it('is one integer from 1 to N written in decimal: hex, exponents, signs, decimals and blanks are a 400', async () => {
    const user = await runtime.mintUserToken('limits');
    for (const path of ['/notifications', '/devices']) {
      for (const limit of ['0x10', '1e1', '+5', '5.0', '%205', '05x', '0b11', 'Infinity']) {
        const response = await api('GET', `${path}?limit=${limit}`, user);
        expect(response.status, `${path}?limit=${limit}`).toBe(400);
        expect(response.body.details, limit).toEqual([
          { field: 'limit', issue: 'must be one integer from 1 to 100' },
        ]);
      }
      expect((await api('GET', `${path}?limit=16`, user)).status).toBe(200);
    }
  });
});

describe('source', () => {
  it('of a notification is a dotted name with no empty part, as an event source is (400, not a stored "billing.")', async () => {
    const billing = await runtime.mintServiceToken('billing', ['notifications:write', 'events:publish']);
    for (const source of ['billing.', 'billing..x', 'billing.x.', 'billing. x']) {
      const notification = await api('POST', '/notifications', billing, {
        event_type: 'source.test',
        title: 'x',
        recipient_ids: ['sourced'],
        source,
      });
      expect(notification.status, source).toBe(400);
      expect(notification.body.details, source).toEqual([{ field: 'source', issue: expect.any(String) }]);
      const event = await api('POST', '/events', billing, {
        event_type: 'source.test',
        source,
        version: 1,
        data: {},
      });
      expect(event.status, source).toBe(400);
      expect(event.body.details, source).toEqual([{ field: 'source', issue: expect.any(String) }]);
    }
  });

  it('"user" is only a user\'s own: a service named user is refused (403), so no service can pass for a user', async () => {
    const named = await runtime.mintServiceToken('user', ['notifications:write', 'events:publish']);
    const notification = (source?: string) => ({
      event_type: 'source.test',
      title: 'x',
      recipient_ids: ['impersonated'],
      ...(source === undefined ? {} : { source }),
    });
    for (const [path, body] of [
      ['/notifications', notification()],
      ['/notifications', notification('user')],
      ['/notifications', notification('user.billing')],
      ['/events', { event_type: 'source.test', source: 'user', version: 1, data: {} }],
    ] as const) {
      const response = await api('POST', path, named, body);
      expect(response, `${path} ${JSON.stringify(body)}`).toMatchObject({
        status: 403,
        body: { code: 'forbidden' },
      });
      expect(response.body.message).toContain('"user"');
    }
    const reader = await runtime.mintUserToken('impersonated');
    expect((await api('GET', '/notifications', reader)).body.items).toEqual([]);
  });

  it('"notify" is the service\'s own source: a service named notify cannot publish events that read as Notify\'s (a fake device pruning)', async () => {
    const named = await runtime.mintServiceToken('notify', ['notifications:write', 'events:publish']);
    for (const source of ['notify', 'notify.devices']) {
      const response = await api('POST', '/events', named, {
        event_type: 'notify.device.pruned',
        source,
        version: 1,
        data: { user_id: 'victim' },
      });
      expect(response, source).toMatchObject({ status: 403, body: { code: 'forbidden' } });
      expect(response.body.message).toContain('"notify"');
    }
    const notification = await api('POST', '/notifications', named, {
      event_type: 'source.test',
      title: 'x',
      recipient_ids: ['impersonated-by-notify'],
    });
    expect(notification.status).toBe(403);
  });
});
