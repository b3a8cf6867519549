/**
 * The docs' Web Push service worker, exactly as written there, in Chromium: fed (through the DevTools protocol's
 * push delivery, since no real push service is reachable) the very JSON the sender sent and the local push service
 * decrypted with `http_ece`, it shows the notification with the push's title, body and tag, and shows nothing for a
 * silent push.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushContent } from '../../../lambdas/domain/push/provider';
import { createWebPushSender, generateVapidCredentials } from '../../../lambdas/domain/push/webpush';
import { repoRoot } from '../../../lib/paths';
import { startWebPushStandIn, type WebPushStandIn } from '../../../local/push/webpush-stand-in';
import { eventually } from '../../support/api';
import { launchBrowser, startStaticServer, type TestBrowser } from '../../support/browser';
import { pushContent } from '../../support/push-content';

/** The docs page's ```js block that handles `push` (docs/push.md once merged there). */
const serviceWorker = (): string => {
  for (const page of ['docs/push.md', 'docs/push-webpush.md']) {
    let text: string;
    try {
      text = readFileSync(join(repoRoot, page), 'utf8');
    } catch {
      continue;
    }
    const block = [...text.matchAll(/```js\n([\s\S]*?)```/g)]
      .map((match) => match[1] ?? '')
      .find((code) => code.includes("addEventListener('push'"));
    if (block) return block;
  }
  throw new Error('no docs page has the Web Push service worker');
};

/** In the page (a string: these tests compile without the DOM library): the notifications the worker shows. */
const NOTIFICATIONS = `navigator.serviceWorker.ready
  .then((registration) => registration.getNotifications())
  .then((list) => list.map(({ title, body, tag, data, actions }) =>
    ({ title, body, tag, data, actions: actions.map(({ action, title }) => ({ action, title })) })))`;

const RECEIVER = '0196a3b2-7c00-7abc-8def-0123456789ab';

const PAGE = `<!doctype html><title>push</title><script>
  window.clicks = [];
  navigator.serviceWorker.addEventListener('message', (event) => window.clicks.push(event.data));
  window.ready = navigator.serviceWorker.register('/service-worker.js').then(() => navigator.serviceWorker.ready);
</script>`;

/** In the worker: the docs' click handler run on the shown notification, as a click on `action` would run it. */
const CLICK = (action: string) => `self.registration.getNotifications().then(([shown]) =>
  openPushClick(shown.data, ${JSON.stringify(action)}).then(() => 'opened', (error) => error.name))`;

describe('the Web Push service worker of the docs, in Chromium', () => {
  let standIn: WebPushStandIn;
  let browser: TestBrowser;
  let site: Awaited<ReturnType<typeof startStaticServer>>;

  beforeAll(async () => {
    standIn = await startWebPushStandIn();
    site = await startStaticServer({
      '/': { type: 'text/html', body: PAGE },
      '/service-worker.js': { type: 'text/javascript', body: serviceWorker() },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await standIn?.close();
  });

  /** What the browser's push service would hand the worker: the plaintext the stand-in decrypted. */
  const sentThrough = async (push: PushContent): Promise<string> => {
    const credentials = generateVapidCredentials('mailto:ops@example.com');
    const subscription = standIn.subscribe(credentials.public_key);
    const outcome = await createWebPushSender(credentials, { allowLoopback: true }).send(
      {
        provider: 'webpush',
        token: subscription.endpoint,
        app_id: null,
        web_keys: subscription.keys,
        registered_at: new Date().toISOString(),
      },
      push,
    );
    expect(outcome.kind).toBe('delivered');
    const received = standIn.received().find((entry) => entry.push_id === push.push_id);
    return JSON.stringify(received?.payload);
  };

  it('shows a push as a notification with its title, body and tag; a silent one shows nothing', async () => {
    const silent = await sentThrough(
      pushContent({ title: '', body: '', silent: true, data: { sync: 'feed' } }),
    );
    const shown = await sentThrough(
      pushContent({
        title: 'Build failed',
        body: 'main is red',
        collapse_key: 'build-9',
        data: { build: 9 },
        receiver_id: RECEIVER,
        url: `${site.origin}/builds/9`,
        actions: [
          { id: 'retry', label: 'Retry', url: null },
          { id: 'logs', label: 'Logs', url: `${site.origin}/builds/9/logs` },
        ],
      }),
    );
    await browser.context.grantPermissions(['notifications'], { origin: site.origin });
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    const registered = new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const ours = registrations.find((registration) => registration.scopeURL.startsWith(site.origin));
        if (ours && !ours.isDeleted) resolve(ours.registrationId);
      });
    });
    await cdp.send('ServiceWorker.enable');
    await page.goto(site.origin);
    await page.evaluate('window.ready');
    const registrationId = await registered;
    for (const data of [silent, shown]) {
      await cdp.send('ServiceWorker.deliverPushMessage', { origin: site.origin, registrationId, data });
    }
    // Pushes reach the worker in order: once the second one's notification is there, the first was handled.
    // `waitForFunction` takes the promise as a truthy answer and returns at once, so the list is then polled with
    // `evaluate`, which awaits it. The page's wait stays: polled from here alone, the list stayed empty for 20 s in
    // headless Chromium (cause not found).
    await page.waitForFunction(`${NOTIFICATIONS}.then((list) => list.length > 0)`);
    const notifications = await eventually(
      () => page.evaluate(NOTIFICATIONS) as Promise<unknown[]>,
      (list) => list.length > 0,
    );
    expect(notifications).toEqual([
      {
        title: 'Build failed',
        body: 'main is red',
        tag: 'build-9',
        data: JSON.parse(shown),
        actions: [
          { action: 'retry', title: 'Retry' },
          { action: 'logs', title: 'Logs' },
        ],
      },
    ]);

    // Clicks: the worker hands each to the open page (which holds the token) as a message.
    const worker = browser.context
      .serviceWorkers()
      .find((candidate) => candidate.url().startsWith(site.origin));
    if (!worker) throw new Error('the service worker is not running');
    for (const action of ['retry', 'logs', '']) await worker.evaluate(CLICK(action));
    await page.waitForFunction('window.clicks.length === 3');
    expect(await page.evaluate('window.clicks')).toEqual([
      { type: 'notify.push.click', receiver_id: RECEIVER, action_id: 'retry' },
      { type: 'notify.push.click', receiver_id: RECEIVER, action_id: 'logs' },
      { type: 'notify.push.click', receiver_id: RECEIVER, action_id: null },
    ]);
  });
});
