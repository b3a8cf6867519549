/**
 * The demo inbox (docs/demo.md) as a user meets it: its local-only endpoints over HTTP, then the page in a real
 * headless Chromium (Debian's, through playwright-core), from the runtime's origin and from a second one. A
 * screenshot lands in .artifacts/screenshots/demo-inbox.png.
 */
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DeleteConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../lambdas/core/clients';
import { connectionsApi } from '../../lambdas/core/clients-connections';
import { table } from '../../lambdas/domain/realtime/tables';
import { createDemo } from '../../local/demo/server';
import { REPO_ROOT } from '../../local/lambda/runner';
import { apiClient, eventually } from '../support/api';
import { launchBrowser, startStaticServer, type TestBrowser } from '../support/browser';
import { awaitCleanUp, connectionsOf } from '../support/disconnect';
import { type Runtime, startTestRuntime } from '../support/runtime';

const SCREENSHOT_DIR = join(REPO_ROOT, '.artifacts', 'screenshots');

let runtime: Runtime;
let browser: TestBrowser;
let otherOrigin: Awaited<ReturnType<typeof startStaticServer>>;
const api = apiClient(() => runtime.httpUrl);
const demoApi = apiClient(() => `http://127.0.0.1:${runtime.port}/demo/api`);

beforeAll(async () => {
  [runtime, browser] = await Promise.all([startTestRuntime({ demo: true }), launchBrowser()]);
  // The same page and script, served by another origin: the page then calls the runtime cross-origin.
  const [html, script] = await Promise.all([
    fetch(`${runtime.demoUrl}`).then((response) => response.text()),
    fetch(`${runtime.demoUrl}app.js`).then((response) => response.text()),
  ]);
  otherOrigin = await startStaticServer({
    '/': { type: 'text/html', body: html },
    '/app.js': { type: 'text/javascript', body: script },
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await otherOrigin?.close();
  await runtime?.stop();
});

const runtimeOrigin = () => `http://127.0.0.1:${runtime.port}`;

/** Opens the demo for `user`; `extra` adds query settings (`token_ttl`, `api`). */
const openDemo = async (user: string, options: { origin?: string; query?: string } = {}): Promise<Page> => {
  const page = await browser.context.newPage();
  page.on('pageerror', (error) => process.stderr.write(`demo page (${user}): ${error.message}\n`));
  const base = options.origin ? `${options.origin}/` : `${runtime.demoUrl}`;
  await page.goto(`${base}?user=${user}&api=${runtimeOrigin()}${options.query ?? ''}`);
  await page.locator('#state[data-state="connected"]').waitFor();
  return page;
};

const badge = (page: Page) => page.locator('#bell').getAttribute('data-count');

/** Sends through the page's own control, as a user would. */
const sendFromPage = async (page: Page, title: string) => {
  await page.locator('#send-title').fill(title);
  await page.locator('#send button[type="submit"]').click();
};

/** Sends as a backend would: a service token on the REST API. */
const sendAsService = async (user: string, title: string, channels = ['in_app', 'toast']) => {
  const token = await runtime.mintServiceToken('tests', ['notifications:write']);
  const created = await api('POST', '/notifications', token, {
    event_type: 'demo.test',
    title,
    channels,
    recipient_ids: [user],
  });
  expect(created.status).toBe(202);
};

/** The notification frames the page received (its activity panel), oldest first: frame id and title. */
const received = async (page: Page): Promise<{ id: string; text: string }[]> =>
  (
    await page.locator('#activity li[data-kind="notification"]').evaluateAll((lines) =>
      lines.map((line) => {
        const item = line as unknown as { dataset: { id: string }; textContent: string };
        return { id: item.dataset.id, text: item.textContent };
      }),
    )
  ).reverse();

describe('local-only demo endpoints', () => {
  it('mints a user token the API accepts, within the allowed lifetime', async () => {
    const minted = await demoApi('POST', '/token', undefined, { user_id: 'ellen', expires_in_secs: 120 });
    expect(minted.status).toBe(200);
    expect(minted.body).toMatchObject({ user_id: 'ellen', token: expect.any(String) });
    expect((await api('GET', '/notifications/unread-count', minted.body.token)).body).toEqual({ count: 0 });

    for (const [body, field] of [
      [{ user_id: 'ellen', expires_in_secs: 0 }, 'expires_in_secs'],
      [{ user_id: 'ellen', expires_in_secs: 86_401 }, 'expires_in_secs'],
      [{ user_id: 'not allowed/slash' }, 'user_id'],
      [[], 'JSON object'],
    ] as const) {
      const refused = await demoApi('POST', '/token', undefined, body);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'validation', message: expect.stringContaining(field) });
    }
    expect((await demoApi('GET', '/token')).status).toBe(405);
  });

  it('sends a test notification with the service token it keeps to itself', async () => {
    const sent = await demoApi('POST', '/notifications', undefined, { user_id: 'ellen', title: 'Hi Ellen' });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ id: expect.any(String), recipient_count: 1 });
    const token = await runtime.mintUserToken('ellen');
    const feed = await eventually(
      () => api('GET', '/notifications', token),
      (result) => result.body.items.length === 1,
    );
    expect(feed.body.items[0]).toMatchObject({ title: 'Hi Ellen', channels: ['in_app', 'toast'] });
    // The service's own validation answers as it is.
    const invalid = await demoApi('POST', '/notifications', undefined, {
      user_id: 'ellen',
      channels: ['fax'],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('validation');
  });

  it('does not exist when tokens come from a real IdP (no development key to sign with)', async () => {
    const demo = createDemo({ httpUrl: runtime.httpUrl, minting: undefined });
    const server = createServer((request, response) => {
      if (!demo.handle(request, response)) response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/demo/api/token`,
        {
          method: 'POST',
          body: JSON.stringify({ user_id: 'ellen' }),
        },
      );
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({
        code: 'not_found',
        message: expect.stringContaining('npm run token'),
      });
    } finally {
      server.close();
    }
  });

  it('serves the API reference (docs/api/index.html) next to the demo', async () => {
    const response = await fetch(`${runtime.demoUrl}api-reference.html`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toBe(await readFile(join(REPO_ROOT, 'docs/api/index.html'), 'utf8'));
  });

  it('answers a preflight from another origin, as the REST API does', async () => {
    const response = await fetch(`${runtimeOrigin()}/demo/api/token`, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:1', 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('the demo page in Chromium', () => {
  let alice: Page;

  it('loads: connected, the user in the room, an empty feed and no badge', async () => {
    alice = await openDemo('alice');
    expect(await badge(alice)).toBe('0');
    await alice.locator('#presence li[data-user="alice"][data-status="online"]').waitFor();
    expect(await alice.locator('#inbox li').count()).toBe(0);
  });

  it('shows a toast and the unread badge when a notification arrives', async () => {
    await sendFromPage(alice, 'Your invoice is ready');
    await alice.locator('.toast', { hasText: 'Your invoice is ready' }).waitFor();
    await alice.locator('#bell[data-count="1"]').waitFor();
    await alice.locator('#inbox li[data-read="false"]', { hasText: 'Your invoice is ready' }).waitFor();
  });

  it('updates the badge on mark-read and read-all, and the service agrees', async () => {
    // With a toast (or realtime) channel: an in_app-only notification sends no frame, so no page learns of it live.
    await sendAsService('alice', 'Second');
    await sendAsService('alice', 'Third');
    await alice.locator('#bell[data-count="3"]').waitFor();
    await alice
      .locator('#inbox li', { hasText: 'Second' })
      .locator('button[aria-label^="Mark read"]')
      .click();
    await alice.locator('#bell[data-count="2"]').waitFor();
    await alice.locator('#inbox li[data-read="true"]', { hasText: 'Second' }).waitFor();
    await alice.locator('#inbox').getByRole('button', { name: 'Mark all read' }).click();
    await alice.locator('#bell[data-count="0"]').waitFor({ state: 'attached' }); // hidden at 0
    expect(await alice.locator('#inbox li[data-read="false"]').count()).toBe(0);
    // The page shows reads at once (optimistic); the service gets there when its read-all answers.
    const token = await runtime.mintUserToken('alice');
    const count = await eventually(
      () => api('GET', '/notifications/unread-count', token),
      (result) => result.body.count === 0,
    );
    expect(count.body).toEqual({ count: 0 });
    await alice.reload();
    await alice.locator('#inbox li[data-read="true"]').nth(2).waitFor();
    expect(await badge(alice)).toBe('0');
  });

  it('clears the badge on a second tab of the same user when the first reads (state frames)', async () => {
    const [first, second] = [await openDemo('carol'), await openDemo('carol')];
    await sendAsService('carol', 'One');
    await sendAsService('carol', 'Two');
    await second.locator('#bell[data-count="2"]').waitFor();
    await first.locator('#bell[data-count="2"]').waitFor();
    await first.locator('#inbox li', { hasText: 'One' }).locator('button[aria-label^="Mark read"]').click();
    // The second tab made no request: the `notification.state` frame the read sent brought it.
    await second.locator('#bell[data-count="1"]').waitFor();
    await second.locator('#inbox li[data-read="true"]', { hasText: 'One' }).waitFor();
    await first.locator('#inbox').getByRole('button', { name: 'Mark all read' }).click();
    await second.locator('#bell[data-count="0"]').waitFor({ state: 'attached' });
    expect(await second.locator('#inbox li[data-read="false"]').count()).toBe(0);
    await Promise.all([first.close(), second.close()]);
  });

  it('works from a second origin: REST calls pass CORS, and the room shows both users live', async () => {
    const bob = await browser.context.newPage();
    const countsCall = bob.waitForResponse((response) => response.url().endsWith('/notifications/counts'));
    await bob.goto(`${otherOrigin.origin}/?user=bob&api=${runtimeOrigin()}`);
    const response = await countsCall;
    expect((await response.request().allHeaders()).origin).toBe(otherOrigin.origin);
    expect(response.status()).toBe(200);
    expect(await response.headerValue('access-control-allow-origin')).toBe('*');
    await bob.locator('#state[data-state="connected"]').waitFor();
    await sendFromPage(bob, 'Cross-origin hello');
    await bob.locator('.toast', { hasText: 'Cross-origin hello' }).waitFor();
    await bob.locator('#bell[data-count="1"]').waitFor();
    // Presence frames: each page lists the other without a reload.
    await bob.locator('#presence li[data-user="alice"]').waitFor();
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await bob.screenshot({ path: join(SCREENSHOT_DIR, 'demo-inbox.png'), fullPage: true });
    await alice.locator('#presence li[data-user="bob"][data-status="online"]').waitFor();
    await bob.locator('#status').selectOption('busy');
    await alice.locator('#presence li[data-user="bob"][data-status="busy"]').waitFor();
    const bobConnections = await connectionsOf('bob');
    await bob.close();
    // By bob's $disconnect, or by the sweep when API Gateway (AWS-like delivery) sends none.
    await awaitCleanUp(bobConnections);
    await alice.locator('#presence li[data-user="bob"]').waitFor({ state: 'detached' });
  });

  it('resumes with replay after the server drops the connection: nothing missing, nothing twice', async () => {
    const carol = await openDemo('carol');
    // What crossed the wire, to tell a service loss from a client one if this ever fails.
    const wire: string[] = [];
    const note = (line: string) => wire.push(`${new Date().toISOString().slice(17, 23)} ${line}`);
    carol.on('websocket', (socket) => {
      socket.on('framereceived', (frame) => note(`< ${String(frame.payload).slice(0, 120)}`));
      socket.on('framesent', (frame) => note(`> ${String(frame.payload).slice(0, 60)}`));
      socket.on('close', () => note('closed'));
    });
    const sent: string[] = [];
    // Drop (as API Gateway's DeleteConnection does) and send at once, until a resume had frames to replay.
    for (let round = 0; round < 5; round += 1) {
      const memberships = await documentClient().send(
        new QueryCommand({
          TableName: table('channels'),
          KeyConditionExpression: 'channel = :channel',
          ExpressionAttributeValues: { ':channel': 'user:carol' },
        }),
      );
      // The page's connection; a previous round's may still be listed until its $disconnect is through (410).
      const ids = (memberships.Items ?? []).map((item) => item.connection_id as string);
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) {
        await connectionsApi()
          .send(new DeleteConnectionCommand({ ConnectionId: id }))
          .catch((error: Error) => expect(error.name).toBe('GoneException'));
        note(`deleted ${id}`);
      }
      for (let index = 0; index < 3; index += 1) {
        const title = `missed ${round}.${index}`;
        sent.push(title);
        await sendAsService('carol', title, ['toast']);
        note(`sent ${title}`);
      }
      await carol.locator(`#activity li[data-kind="session"][data-resumed="true"]`).nth(round).waitFor();
      const withReplay = await carol
        .locator('#activity li[data-kind="session"][data-resumed="true"]:not([data-replayed="0"])')
        .count();
      if (withReplay > 0) break;
    }
    const frames = await eventually(
      () => received(carol),
      (list) => list.length >= sent.length,
    );
    expect(new Set(frames.map((frame) => frame.id)).size, wire.join('\n')).toBe(frames.length);
    // Each title once (a line ends with its title); separate notifications carry no order between them.
    const titles = frames.map((frame) => sent.find((title) => frame.text.endsWith(` ${title}`)));
    expect(titles.sort(), wire.join('\n')).toEqual([...sent].sort());
    expect(
      await carol
        .locator('#activity li[data-kind="session"][data-resumed="true"]:not([data-replayed="0"])')
        .count(),
    ).toBeGreaterThan(0);
    // Every loss was a resume: no new session, so no reload was needed.
    expect(await carol.locator('#activity li[data-kind="session"][data-resumed="false"]').count()).toBe(1);
    await carol.close();
  });

  it('refreshes a short-lived token on the open connection without a visible drop', async () => {
    const dave = await openDemo('dave', { query: '&token_ttl=6' });
    // Two refreshes: the first token has expired by then, and the connection never left `connected`.
    await dave
      .locator('#activity li[data-kind="token"][data-refresh="true"]')
      .nth(1)
      .waitFor({ timeout: 30_000 });
    expect(
      await dave
        .locator('#activity li[data-kind="state"]')
        .evaluateAll((lines) =>
          lines.map((line) => (line as unknown as { dataset: { state: string } }).dataset.state),
        ),
    ).toEqual(['connected', 'connecting']);
    await sendAsService('dave', 'Still here');
    await dave.locator('.toast', { hasText: 'Still here' }).waitFor();
    await dave.locator('#bell[data-count="1"]').waitFor();
    await dave.close();
  }, 60_000);

  it('turns toasts off for demo.* in the preferences panel: the item reaches the feed, no toast shows', async () => {
    const erin = await openDemo('erin');
    await erin.locator('#prefs-pattern').fill('demo.*');
    await erin.locator('#prefs-toast').uncheck();
    await erin.locator('#prefs button[type="submit"]').click();
    await erin.locator('#prefs-rules li[data-pattern="demo.*"]', { hasText: 'off on toast' }).waitFor();
    const token = await runtime.mintUserToken('erin');
    expect((await api('GET', '/preferences', token)).body.rules).toEqual([
      { event_type: 'demo.*', channels: { in_app: true, toast: false, realtime: true } },
    ]);
    await sendAsService('erin', 'Quietly');
    const feed = await eventually(
      () => api('GET', '/notifications', token),
      (result) => result.body.items.some((item: { title: string }) => item.title === 'Quietly'),
    );
    expect(feed.body.items.map((item: { title: string }) => item.title)).toContain('Quietly');
    // A toast of another type, sent after the quiet one was delivered, still shows: toasts were only turned off for demo.*.
    const service = await runtime.mintServiceToken('tests', ['notifications:write']);
    const other = { event_type: 'other.test', title: 'Loud', channels: ['toast'], recipient_ids: ['erin'] };
    expect((await api('POST', '/notifications', service, other)).status).toBe(202);
    await erin.locator('.toast', { hasText: 'Loud' }).waitFor();
    expect(await erin.locator('.toast', { hasText: 'Quietly' }).count()).toBe(0);
    await erin.reload();
    await erin.locator('#inbox li', { hasText: 'Quietly' }).waitFor();
    await erin.close();
  });
});
