/**
 * The SDK's Web Push helpers in Chromium, against the local runtime: a page registers the service worker
 * docs/push.md shows, and `subscribeToPush` fetches the app's VAPID key, subscribes the real registration and
 * registers the subscription.
 *
 * Headless Chromium offline cannot reach a push service (Google's FCM for Chromium): its `pushManager.subscribe`
 * never answers here. What is proven with the real registration: the SDK calls Chromium's real `subscribe` with
 * `userVisibleOnly` and the app's VAPID key as bytes, and registers nothing while it has no subscription. For the
 * rest, the test answers that one call with a subscription shaped as Chromium's `PushSubscription` (keys made by
 * the page's WebCrypto, an endpoint on loopback), standing in for the push service only, and checks what the SDK
 * registers (through the service's own validation), and that it unsubscribes and unregisters.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushSettingName } from '../../common/env';
import { REPO_ROOT } from '../../local/lambda/runner';
import { apiClient, eventually } from '../support/api';
import { launchBrowser, startStaticServer, type TestBrowser } from '../support/browser';
import { vapidCredentials } from '../support/push-keys';
import { type Runtime, startTestRuntime } from '../support/runtime';

/** The service worker of docs/push.md, as the page gets it: the doc's example is the tested one. */
const serviceWorkerOfDocs = (): string => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/push.md'), 'utf8');
  const block = /A minimal service worker[\s\S]*?```js\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/push.md shows no service worker');
  return block;
};

const vapid = vapidCredentials();

let runtime: Runtime;
let browser: TestBrowser;
let site: Awaited<ReturnType<typeof startStaticServer>>;
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  [runtime, browser] = await Promise.all([
    startTestRuntime({
      env: {
        [pushSettingName('APPS')]: JSON.stringify({ 'com.acme.web': { webpush: { credentials: vapid } } }),
      },
    }),
    launchBrowser(),
  ]);
  const sdk = await build({
    entryPoints: [join(REPO_ROOT, 'client/src/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  site = await startStaticServer({
    '/': {
      type: 'text/html',
      body: '<!doctype html><title>push</title><script type="module" src="/page.js"></script>',
    },
    '/page.js': { type: 'text/javascript', body: PAGE_SCRIPT },
    '/sdk.js': { type: 'text/javascript', body: sdk.outputFiles[0]?.text ?? '' },
    '/sw.js': { type: 'text/javascript', body: serviceWorkerOfDocs() },
  });
  await browser.context.grantPermissions(['notifications'], { origin: site.origin });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await runtime?.stop();
});

interface PageResult {
  readonly subscribeCalls: { userVisibleOnly: boolean; applicationServerKey: string }[];
  readonly device?: unknown;
  readonly error?: string;
  readonly unsubscribed?: boolean;
}

/**
 * The page's script: `runSubscribe` runs subscribeToPush with the real registration, and records each call of
 * `pushManager.subscribe` before passing it to Chromium's own. Offline, Chromium's subscribe waits for the push
 * service forever: without `answerForPushService` the script returns once the call was made (the SDK still
 * waiting); with it, the recorder answers that call as the push service would, and the SDK goes on.
 * Plain JavaScript served as a module (the test runner would rewrite a function's dynamic import).
 */
const PAGE_SCRIPT = `
import { NotifyApi } from '/sdk.js';

const toBase64url = (buffer) =>
  btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, '');

window.runSubscribe = async ({ apiUrl, token, answerForPushService }) => {
  const registration = await navigator.serviceWorker.register('/sw.js');
  await navigator.serviceWorker.ready;
  const manager = registration.pushManager;
  const real = manager.subscribe.bind(manager);
  const existing = manager.getSubscription.bind(manager);
  const subscribeCalls = [];
  let called;
  const subscribeCalled = new Promise((resolve) => {
    called = resolve;
  });
  let subscribed = null;
  manager.subscribe = async (options) => {
    const key = options.applicationServerKey;
    subscribeCalls.push({ userVisibleOnly: options.userVisibleOnly === true, applicationServerKey: toBase64url(key) });
    const chromium = real(options);
    called();
    if (!answerForPushService) return chromium;
    // The push service's part: a subscription as Chromium's PushSubscription has it.
    const pair = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
    const p256dh = toBase64url(await crypto.subtle.exportKey('raw', pair.publicKey));
    const auth = toBase64url(crypto.getRandomValues(new Uint8Array(16)));
    const endpoint = 'http://127.0.0.1:9/push-service/' + crypto.randomUUID();
    subscribed = {
      endpoint,
      options: { applicationServerKey: key.buffer, userVisibleOnly: true },
      expirationTime: null,
      toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }),
      unsubscribe: async () => {
        subscribed = null;
        return true;
      },
    };
    return subscribed;
  };
  manager.getSubscription = async () => subscribed ?? existing();
  const client = new NotifyApi({ apiUrl, getToken: async () => token });
  const subscribing = client.subscribeToPush(registration, { appId: 'com.acme.web' });
  if (!answerForPushService) {
    await subscribeCalled;
    return { subscribeCalls };
  }
  try {
    const device = await subscribing;
    const unsubscribed = await client.unsubscribeFromPush(registration);
    return { subscribeCalls, device, unsubscribed };
  } catch (error) {
    return { subscribeCalls, error: error.message };
  }
};
window.reportClicks = async ({ apiUrl, token }) => {
  await navigator.serviceWorker.register('/sw.js');
  await navigator.serviceWorker.ready;
  const client = new NotifyApi({ apiUrl, getToken: async () => token });
  window.clickErrors = [];
  client.reportPushClicks({ onError: (error) => window.clickErrors.push(error.message) });
};
window.pageReady = true;
`;

const subscribeInPage = async (
  page: Page,
  token: string,
  answerForPushService: boolean,
): Promise<PageResult> => {
  await page.waitForFunction(() => (globalThis as { pageReady?: boolean }).pageReady === true);
  return page.evaluate(
    (args) =>
      (globalThis as unknown as { runSubscribe: (input: typeof args) => Promise<PageResult> }).runSubscribe(
        args,
      ),
    { apiUrl: runtime.httpUrl, token, answerForPushService },
  );
};

describe('subscribeToPush in Chromium', () => {
  it('subscribes the real registration with userVisibleOnly and the app’s VAPID key, registering nothing meanwhile', async () => {
    const token = await runtime.mintUserToken('push-browser-1');
    const page = await browser.context.newPage();
    await page.goto(`${site.origin}/`);
    const result = await subscribeInPage(page, token, false);
    // Chromium took the call (a key it cannot use is refused at once with InvalidAccessError) and waits for the
    // push service; the SDK waits with it and registers nothing before it has a subscription.
    expect(result.subscribeCalls).toEqual([
      { userVisibleOnly: true, applicationServerKey: vapid.public_key },
    ]);
    expect((await api('GET', '/devices', token)).body.items).toEqual([]);
    await page.close();
  });

  it('registers the subscription the push service gives as a Web Push device, and unsubscribes it', async () => {
    const token = await runtime.mintUserToken('push-browser-2');
    const page = await browser.context.newPage();
    await page.goto(`${site.origin}/`);
    const result = await subscribeInPage(page, token, true);
    expect(result.error).toBeUndefined();
    expect(result.subscribeCalls).toHaveLength(1);
    expect(result.device).toMatchObject({
      platform: 'web',
      provider: 'webpush',
      app_id: 'com.acme.web',
      token: expect.stringMatching(/^http:\/\/127\.0\.0\.1:9\/push-service\//),
      web_keys: { p256dh: expect.stringMatching(/^B[A-Za-z0-9_-]{86}$/) },
    });
    // unsubscribeFromPush removed the device as well as the subscription.
    expect(result.unsubscribed).toBe(true);
    expect((await api('GET', '/devices', token)).body.items).toEqual([]);
    await page.close();
  });
});

describe('reportPushClicks in Chromium', () => {
  /** A notification with two buttons in the user's feed: its receiver id. */
  const itemWithButtons = async (token: string): Promise<string> => {
    const created = await api('POST', '/notifications', token, {
      event_type: 'request.created',
      title: 'Access request',
      actions: [
        { id: 'approve', label: 'Approve' },
        { id: 'reject', label: 'Reject' },
      ],
    });
    expect(created.status).toBe(202);
    const feed = await api('GET', '/notifications', token);
    return feed.body.items.find(
      (item: { notification_id: string }) => item.notification_id === created.body.id,
    ).id;
  };

  const interactedAction = async (token: string, receiverId: string) =>
    eventually(
      async () =>
        (await api('GET', '/notifications', token)).body.items.find(
          (item: { id: string }) => item.id === receiverId,
        ),
      (item: { interacted_action: string | null; read_at: string | null } | undefined) =>
        item?.interacted_action != null,
      15_000,
    ).then((item) => ({ action: item?.interacted_action, read: item?.read_at !== null }));

  it('reports the click the docs’ service worker posts to the page, and the one in the URL it opens', async () => {
    const token = await runtime.mintUserToken('push-clicks-1');
    const [pressed, opened] = [await itemWithButtons(token), await itemWithButtons(token)];
    const page = await browser.context.newPage();
    // The worker opened the app for a press on "reject" (no page of it was open): the click is in the URL.
    await page.goto(`${site.origin}/?notify_receiver_id=${opened}&notify_action_id=reject`);
    await page.waitForFunction(() => (globalThis as { pageReady?: boolean }).pageReady === true);
    await page.evaluate(
      (args) =>
        (globalThis as unknown as { reportClicks: (input: typeof args) => Promise<void> }).reportClicks(args),
      { apiUrl: runtime.httpUrl, token },
    );
    expect(await interactedAction(token, opened)).toEqual({ action: 'reject', read: true });

    // A press on "approve" while the page is open: the worker posts it to the page, whose SDK reports it.
    const worker = browser.context
      .serviceWorkers()
      .find((candidate) => candidate.url().startsWith(site.origin));
    if (!worker) throw new Error('the service worker is not running');
    const push = { receiver_id: pressed, actions: [{ action: 'approve', title: 'Approve', url: null }] };
    await worker.evaluate(
      `openPushClick(${JSON.stringify(push)}, 'approve').then(() => 'focused', (error) => error.name)`,
    );
    expect(await interactedAction(token, pressed)).toEqual({ action: 'approve', read: true });
    expect(await page.evaluate('window.clickErrors')).toEqual([]);
    await page.close();
  });
});
