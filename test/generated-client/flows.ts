/**
 * Every REST route called the way docs/client.md shows, through a client generated from docs/api/openapi.json by
 * openapi-typescript (default options) and openapi-fetch: only the fields a caller means to set, defaults left
 * out. test/e2e/generated-client.test.ts typechecks this file against freshly generated types, then runs it
 * through a validating proxy in front of the local runtime. Types come from ./generated (written by the test).
 */
import createClient from 'openapi-fetch';
import type { paths } from './generated/openapi';

export interface FlowOptions {
  /** The service's REST base URL (`…/api/v1`), here the validating proxy's. */
  readonly baseUrl: string;
  /** A user token of `alice`. */
  readonly userToken: string;
  /** A token of the service `billing` with every scope. */
  readonly serviceToken: string;
  /** Makes names unique per run. */
  readonly run: string;
}

interface Answer {
  readonly response: Response;
}

/** The answer, when its status is `status`; else an error naming the call. */
const expectStatus = <T extends Answer>(what: string, status: number, answer: T): T => {
  if (answer.response.status !== status)
    throw new Error(`${what}: answered ${answer.response.status}, expected ${status}`);
  return answer;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const runFlows = async ({ baseUrl, userToken, serviceToken, run }: FlowOptions): Promise<void> => {
  const anonymous = createClient<paths>({ baseUrl });
  const user = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${userToken}` } });
  const service = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${serviceToken}` } });
  const topic = `generated-${run}`;

  // Health and the description itself.
  expectStatus('live', 200, await anonymous.GET('/live'));
  expectStatus('ready', 200, await anonymous.GET('/ready'));
  const health = expectStatus('health', 200, await anonymous.GET('/health'));
  if (health.data?.status !== 'ok') throw new Error(`health: ${health.data?.status}`);
  expectStatus('metrics', 200, await anonymous.GET('/metrics', { parseAs: 'text' }));
  expectStatus('openapi.json', 200, await anonymous.GET('/openapi.json'));

  // Topics and subscriptions.
  expectStatus('create topic', 201, await service.POST('/topics', { body: { name: topic } }));
  const got = expectStatus(
    'get topic',
    200,
    await user.GET('/topics/{name}', { params: { path: { name: topic } } }),
  );
  if (got.data?.name !== topic) throw new Error('get topic: another topic');
  const mine = expectStatus('subscribe', 201, await user.POST('/subscriptions', { body: { topic } }));
  expectStatus(
    'subscribe a user',
    201,
    await service.POST('/subscriptions', { body: { topic, user_id: 'bob' } }),
  );
  expectStatus('list subscriptions', 200, await user.GET('/subscriptions'));
  expectStatus('list topics', 200, await service.GET('/topics', { params: { query: { limit: 10 } } }));

  // Notifications: only what the caller means; body, data, priority, channels, schedule and expiry defaulted.
  expectStatus(
    'notify a user',
    202,
    await service.POST('/notifications', {
      body: { event_type: 'billing.invoice_ready', title: 'Invoice ready', recipient_ids: ['alice'] },
      params: { header: { 'Idempotency-Key': `invoice-${run}` } },
    }),
  );
  expectStatus(
    'notify a topic',
    202,
    await service.POST('/notifications', {
      body: { event_type: 'billing.news', title: 'News', topics: [topic], channels: ['in_app', 'toast'] },
    }),
  );
  expectStatus(
    'notify oneself',
    202,
    await user.POST('/notifications', {
      body: { event_type: 'reminder.set', title: 'Call back', recipient_ids: ['alice'], priority: 'high' },
    }),
  );
  let feed = expectStatus(
    'feed',
    200,
    await user.GET('/notifications', { params: { query: { limit: 10 } } }),
  );
  for (let tries = 0; (feed.data?.items.length ?? 0) < 3 && tries < 100; tries += 1) {
    await sleep(100);
    feed = expectStatus('feed', 200, await user.GET('/notifications', { params: { query: { limit: 10 } } }));
  }
  const first = feed.data?.items[0];
  if (!first) throw new Error('feed: empty');
  expectStatus('unread count', 200, await user.GET('/notifications/unread-count'));
  const counts = expectStatus('counts', 200, await user.GET('/notifications/counts'));
  if ((counts.data?.total ?? 0) < 3) throw new Error('counts: fewer items than the feed lists');
  const receiver = { params: { path: { receiver_id: first.id } } };
  expectStatus('mark read', 200, await user.POST('/notifications/{receiver_id}/read', receiver));
  expectStatus(
    'mark read with {}',
    200,
    await user.POST('/notifications/{receiver_id}/read', { ...receiver, body: {} }),
  );
  // What happened to a notification: its creator's summary and push records, a recipient's own records.
  const pushed = expectStatus(
    'notify with push',
    202,
    await service.POST('/notifications', {
      body: {
        event_type: 'billing.invoice_ready',
        title: 'Invoice ready',
        recipient_ids: ['alice'],
        channels: ['in_app', 'push'],
        push: { when: 'offline', collapse_key: 'invoices' },
      },
    }),
  );
  const sent = { params: { path: { notification_id: pushed.data?.id ?? '' } } };
  expectStatus('summary', 200, await service.GET('/sent-notifications/{notification_id}', sent));
  expectStatus('push records', 200, await service.GET('/sent-notifications/{notification_id}/pushes', sent));
  expectStatus('own push records', 200, await user.GET('/sent-notifications/{notification_id}/pushes', sent));
  expectStatus('mark all read', 200, await user.POST('/notifications/read-all'));
  expectStatus('mark all read with {}', 200, await user.POST('/notifications/read-all', { body: {} }));
  expectStatus('mark seen', 200, await user.POST('/notifications/seen', { body: { ids: [first.id] } }));
  expectStatus('click', 200, await user.POST('/notifications/{receiver_id}/interact', receiver));
  expectStatus(
    'notify with a link and buttons',
    202,
    await service.POST('/notifications', {
      body: {
        event_type: 'billing.approval',
        title: 'Approve the invoice?',
        recipient_ids: ['alice'],
        url: 'https://example.com/invoices/1',
        actions: [
          { id: 'approve', label: 'Approve' },
          { id: 'view', label: 'View', url: 'https://example.com/invoices/1' },
        ],
      },
    }),
  );
  expectStatus('archive', 200, await user.POST('/notifications/{receiver_id}/archive', receiver));
  expectStatus(
    'archived items',
    200,
    await user.GET('/notifications', { params: { query: { state: 'archived' } } }),
  );
  expectStatus('unarchive', 200, await user.POST('/notifications/{receiver_id}/unarchive', receiver));
  expectStatus(
    'snooze',
    200,
    await user.POST('/notifications/{receiver_id}/snooze', {
      ...receiver,
      body: { until: new Date(Date.now() + 3_600_000).toISOString() },
    }),
  );
  expectStatus('bulk archive', 200, await user.POST('/notifications/bulk', { body: { action: 'archive' } }));

  // Preferences and the service defaults.
  expectStatus('preferences', 200, await user.GET('/preferences'));
  expectStatus(
    'set preferences',
    200,
    await user.PUT('/preferences', {
      body: { rules: [{ event_type: 'billing.news', channels: { toast: false } }] },
    }),
  );
  expectStatus(
    "a user's preferences",
    200,
    await service.GET('/preferences', { params: { query: { user_id: 'alice' } } }),
  );
  expectStatus(
    'set defaults',
    200,
    await service.PUT('/preferences/defaults', {
      body: { rules: [{ event_type: 'security.*', required: true }, { event_type: 'digest.*' }] },
    }),
  );

  // Events: priority and archive defaulted.
  expectStatus(
    'publish',
    202,
    await service.POST('/events', {
      body: { event_type: 'billing.invoice_paid', source: 'billing', version: 1, data: { invoice: 42 } },
    }),
  );

  // Devices.
  const device = `device-${run}`;
  expectStatus(
    'register device',
    201,
    await user.POST('/devices', { body: { token: device, platform: 'android' } }),
  );
  expectStatus('devices', 200, await user.GET('/devices'));
  expectStatus('remove device', 204, await user.DELETE('/devices', { body: { token: device } }));
  // The local runtime's push app has the Web Push stand-in's VAPID key.
  const vapid = expectStatus('vapid key', 200, await user.GET('/push/vapid-public-key'));
  if (!vapid.data?.public_key) throw new Error('vapid key: no public_key');

  // Presence and broadcast.
  expectStatus(
    'presence',
    200,
    await user.GET('/presence/{user_id}', { params: { path: { user_id: 'alice' } } }),
  );
  expectStatus('room', 200, await user.GET('/presence', { params: { query: { scope: 'room:lobby' } } }));
  expectStatus(
    'broadcast',
    202,
    await service.POST('/broadcast', {
      body: { channel: 'room:lobby', payload: { type: 'announcement', text: 'Maintenance at 18:00' } },
    }),
  );

  // Webhooks and their deliveries (nothing matches the filter: no delivery is attempted).
  const webhook = expectStatus(
    'create webhook',
    201,
    await service.POST('/webhooks', {
      body: {
        name: 'generated',
        url: 'http://127.0.0.1:9/hook',
        secret: 'a-secret-of-16-chars-at-least',
        event_filters: [`${topic}.none`],
      },
    }),
  );
  const id = webhook.data?.id ?? '';
  expectStatus('webhooks', 200, await service.GET('/webhooks'));
  expectStatus(
    'dead letters',
    200,
    await service.GET('/webhooks/{id}/deliveries', {
      params: { path: { id }, query: { status: 'dead_letter' } },
    }),
  );
  expectStatus(
    'retry an unknown delivery',
    404,
    await service.POST('/webhooks/{id}/deliveries/{delivery_id}/retry', {
      params: { path: { id, delivery_id: 'no-such-delivery' } },
    }),
  );
  expectStatus('delete webhook', 204, await service.DELETE('/webhooks/{id}', { params: { path: { id } } }));

  expectStatus(
    'unsubscribe',
    204,
    await user.DELETE('/subscriptions/{id}', { params: { path: { id: mine.data?.id ?? '' } } }),
  );
  expectStatus(
    'delete topic',
    202,
    await service.DELETE('/topics/{name}', { params: { path: { name: topic } } }),
  );
};
