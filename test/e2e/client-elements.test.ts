/**
 * The SDK's web components (`<notify-bell>`, `<notify-inbox>`, `<notify-toasts>`) as a page meets them: a plain
 * HTML page on another origin importing the built package files (client/dist's `index.js` and `elements.js`), in
 * headless Chromium, against the local runtime. Keyboard use, what a screen reader is told, axe-core's audit
 * (no serious or critical violation), and screenshots at desktop and phone widths, in
 * .artifacts/screenshots/ (git-ignored) and, with NOTIFY_UPDATE_IMAGES=1, in docs/images/ (they differ a little
 * from run to run, so a plain run leaves the documented ones alone).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../client/build';
import { NotifyService } from '../../client/src/service';
import { REPO_ROOT } from '../../local/lambda/runner';
import { launchBrowser, notifySetupModule, startStaticServer, type TestBrowser } from '../support/browser';
import { sendTitled, sendWithExtras } from '../support/client-sdk';
import { type Runtime, startTestRuntime } from '../support/runtime';

const SCREENSHOT_DIRS = [
  join(REPO_ROOT, '.artifacts', 'screenshots'),
  ...(process.env.NOTIFY_UPDATE_IMAGES === '1' ? [join(REPO_ROOT, 'docs', 'images')] : []),
];

/** A plain page: the elements in the markup, one module script that creates the SDK and registers them. */
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>An app with Notify's elements</title>
    <style>
      body { margin: 0; font-family: system-ui, sans-serif; background: #f4f6f9; color: #1d2430; }
      header { display: flex; align-items: center; justify-content: space-between; padding: 0.5rem 1rem;
        background: #1d2430; color: #fff; }
      header h1 { font-size: 1.1rem; margin: 0; }
      main { padding: 1rem; }
    </style>
  </head>
  <body>
    <header><h1>Acme</h1><notify-bell></notify-bell></header>
    <main><p>The app's own page.</p></main>
    <notify-toasts></notify-toasts>
    <script type="module">${notifySetupModule({ sdk: './index.js', elements: './elements.js' })}
      notify.start();
    </script>
  </body>
</html>
`;

let runtime: Runtime;
let browser: TestBrowser;
let service: NotifyService;
let site: Awaited<ReturnType<typeof startStaticServer>>;
let run = 0;
const buildDir = mkdtempSync(join(tmpdir(), 'notify-elements-'));

beforeAll(async () => {
  [runtime, browser] = await Promise.all([startTestRuntime(), launchBrowser(), buildClient(buildDir)]);
  run = Date.now();
  service = new NotifyService({
    apiUrl: runtime.httpUrl,
    token: await runtime.mintServiceToken('tests', ['notifications:write']),
  });
  const script = (file: string) => ({
    type: 'text/javascript',
    body: readFileSync(join(buildDir, file), 'utf8'),
  });
  site = await startStaticServer({
    '/': { type: 'text/html', body: PAGE },
    '/index.js': script('index.js'),
    '/elements.js': script('elements.js'),
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await runtime?.stop();
  rmSync(buildDir, { recursive: true, force: true });
});

const openPage = async (userId: string, width = 1280, height = 800): Promise<Page> => {
  const page = await browser.context.newPage();
  page.on('pageerror', (error) => process.stderr.write(`elements page (${userId}): ${error.message}\n`));
  await page.setViewportSize({ width, height });
  const settings = new URLSearchParams({
    api: runtime.httpUrl,
    ws: runtime.wsUrl,
    token: await runtime.mintUserToken(userId),
  });
  await page.goto(`${site.origin}/#${settings}`);
  await page.waitForFunction("window.notify?.realtime.state === 'connected'");
  return page;
};

/** What has the keyboard focus, through shadow roots: its accessible label or its text. */
const focused = (page: Page) => () =>
  page.evaluate(`(() => {
    let element = document.activeElement;
    while (element?.shadowRoot?.activeElement) element = element.shadowRoot.activeElement;
    return element?.getAttribute('aria-label') ?? element?.textContent ?? '';
  })()`) as Promise<string>;

const bell = (page: Page) => page.locator('notify-bell button.bell');
const rows = (page: Page) => page.locator('notify-bell li');
const titles = (page: Page) => page.locator('notify-bell li .title').allTextContents();

/** axe-core in the page: the violations of impact serious or critical (shadow roots included). */
const seriousViolations = async (page: Page) => {
  await page.addScriptTag({ path: join(REPO_ROOT, 'node_modules', 'axe-core', 'axe.min.js') });
  const violations = (await page.evaluate('axe.run(document).then((result) => result.violations)')) as {
    id: string;
    impact: string;
    nodes: { target: unknown }[];
  }[];
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      nodes: violation.nodes.map((n) => n.target),
    }));
};

describe('<notify-bell> on a plain page', () => {
  it('shows the unread badge, opens with the keyboard, moves between tabs, and closes with Escape', async () => {
    const userId = `elements-keys-${run}`;
    await sendTitled(service, userId, 'Invoice ready', 'Build failed', 'New comment');
    const page = await openPage(userId);
    await expect.poll(() => bell(page).getAttribute('aria-label')).toBe('Notifications, 3 unread');
    expect(await page.locator('notify-bell .badge').textContent()).toBe('3');

    // Keyboard only: Tab to the bell, Enter opens the panel with focus on the selected tab.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.tagName')).toBe('NOTIFY-BELL');
    await page.keyboard.press('Enter');
    expect(await bell(page).getAttribute('aria-expanded')).toBe('true');
    const dialog = page.locator('notify-bell [role=dialog]');
    await dialog.waitFor();
    expect(await dialog.getAttribute('aria-label')).toBe('Notifications');
    const selectedTab = page.locator('notify-bell [role=tab][aria-selected=true]');
    // The service counts the feed: each tab names its count.
    await expect.poll(focused(page)).toBe('All, 3');
    await expect.poll(() => titles(page)).toEqual(['New comment', 'Build failed', 'Invoice ready']);

    // Arrow keys select the next tab: Unread, with its count.
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => selectedTab.textContent()).toBe('Unread, 3');
    await expect.poll(focused(page)).toBe('Unread, 3');
    await expect.poll(() => titles(page)).toEqual(['New comment', 'Build failed', 'Invoice ready']);
    // Tab into the list and read one with the keyboard.
    await page.keyboard.press('Tab');
    await expect.poll(focused(page)).toBe('New comment');
    await page.keyboard.press('Tab');
    expect(await focused(page)()).toBe('Mark read: New comment');
    await page.keyboard.press('Enter');
    await expect.poll(() => bell(page).getAttribute('aria-label')).toBe('Notifications, 2 unread');
    // It left the Unread tab; focus stayed in the list.
    await expect.poll(() => titles(page)).toEqual(['Build failed', 'Invoice ready']);
    expect(await focused(page)()).not.toBe('');

    await page.keyboard.press('Escape');
    expect(await bell(page).getAttribute('aria-expanded')).toBe('false');
    expect(await page.evaluate('document.activeElement?.tagName')).toBe('NOTIFY-BELL');
    expect(await dialog.isVisible()).toBe(false);
    await page.close();
  }, 90_000);

  it('keeps the keyboard focus on a row’s button while the list re-draws around it (a new notification arrives)', async () => {
    const userId = `elements-focus-${run}`;
    await sendTitled(service, userId, 'one', 'two');
    const page = await openPage(userId);
    await bell(page).click();
    await expect.poll(() => titles(page)).toEqual(['two', 'one']);
    await page.locator('notify-bell button[aria-label="Archive: one"]').focus();
    expect(await focused(page)()).toBe('Archive: one');
    await sendTitled(service, userId, 'three');
    await expect.poll(() => titles(page)).toEqual(['three', 'two', 'one']);
    expect(await focused(page)()).toBe('Archive: one');
    await page.close();
  }, 90_000);

  it('archives, unarchives and snoozes from the panel, and the service agrees', async () => {
    const userId = `elements-changes-${run}`;
    await sendTitled(service, userId, 'one', 'two', 'three');
    const page = await openPage(userId);
    await bell(page).click();
    await expect.poll(() => titles(page)).toEqual(['three', 'two', 'one']);

    await page.locator('notify-bell button[aria-label="Archive: two"]').click();
    await expect.poll(() => titles(page)).toEqual(['three', 'one']);
    await page.locator('notify-bell select[aria-label="Snooze: one"]').selectOption({ label: '1 hour' });
    await expect.poll(() => titles(page)).toEqual(['three']);
    await expect.poll(() => bell(page).getAttribute('aria-label')).toBe('Notifications, 1 unread');

    await page.locator('notify-bell [role=tab]', { hasText: 'Archived' }).click();
    await expect.poll(() => titles(page)).toEqual(['two']);
    await page.locator('notify-bell button[aria-label="Unarchive: two"]').click();
    await expect.poll(() => titles(page)).toEqual([]);
    await page.locator('notify-bell [role=tab]', { hasText: 'All' }).click();
    await expect.poll(() => titles(page)).toEqual(['three', 'two']);

    // The panel shows each change before the service confirms it: the service's state follows.
    const token = await runtime.mintUserToken(userId);
    const titlesIn = (state: string) =>
      fetch(`${runtime.httpUrl}/notifications?state=${state}`, {
        headers: { authorization: `Bearer ${token}` },
      })
        .then((response) => response.json() as Promise<{ items: { title: string }[] }>)
        .then((feed) => feed.items.map((item) => item.title));
    await expect.poll(() => titlesIn('snoozed')).toEqual(['one']);
    // The open panel marked what it showed seen.
    await expect.poll(() => titlesIn('unseen')).toEqual([]);
    expect(await rows(page).count()).toBe(2);
    await page.close();
  }, 90_000);

  it('announces toasts in a live region, and passes axe-core with the panel open (no serious or critical violation)', async () => {
    const userId = `elements-a11y-${run}`;
    await sendTitled(service, userId, 'Welcome aboard');
    const page = await openPage(userId);
    await service.createNotification({
      event_type: 'tests.inbox',
      title: 'Deploy finished',
      body: 'api v2.3 is live',
      recipient_ids: [userId],
      channels: ['in_app', 'toast'],
    });
    const region = page.locator('notify-toasts [role=status]');
    await region.locator('.toast', { hasText: 'Deploy finished' }).waitFor();
    expect(await region.getAttribute('aria-live')).toBe('polite');
    expect(await region.textContent()).toContain('api v2.3 is live');

    await bell(page).click();
    await expect.poll(() => titles(page)).toEqual(['Deploy finished', 'Welcome aboard']);
    expect(await seriousViolations(page)).toEqual([]);

    await page.locator('notify-toasts button[aria-label="Dismiss: Deploy finished"]').click();
    expect(await region.locator('.toast').count()).toBe(0);
    await page.close();
  }, 90_000);

  it('shows an item’s buttons: a button records its click, a link goes through notify-open', async () => {
    const userId = `elements-actions-${run}`;
    await sendWithExtras(service, userId, 'Leave request', {
      url: 'https://example.com/requests/7',
      actions: [
        { id: 'approve', label: 'Approve' },
        { id: 'details', label: 'Details', url: 'https://example.com/requests/7/details' },
      ],
    });
    const page = await openPage(userId);
    // The page routes links itself: it cancels notify-open and keeps what it was asked to open.
    await page.evaluate(`window.opened = [];
      document.addEventListener('notify-open', (event) => {
        event.preventDefault();
        window.opened.push([event.detail.action?.id ?? null, event.detail.url]);
      });`);
    await bell(page).click();
    const approve = page.locator('notify-bell button', { hasText: 'Approve' });
    await approve.click();
    await expect.poll(() => approve.getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => bell(page).getAttribute('aria-label')).toBe('Notifications');
    await page.locator('notify-bell button', { hasText: 'Details' }).click();
    await page.locator('notify-bell li .title').click();
    expect(await page.evaluate('window.opened')).toEqual([
      ['details', 'https://example.com/requests/7/details'],
      [null, 'https://example.com/requests/7'],
    ]);
    expect(page.url()).toContain(site.origin);
    await page.close();
  }, 90_000);

  it('renders at desktop and phone widths (screenshots)', async () => {
    const userId = `elements-shots-${run}`;
    for (const [title, body] of [
      ['Invoice #1042 is ready', 'March: 1,280.00 EUR, due on the 30th'],
      ['Alice mentioned you in “Q3 plan”', '“Can you check the numbers in section 2?”'],
      ['Build 381 failed', 'main · 2 tests failed in checkout'],
    ] as const) {
      await service.createNotification({
        event_type: 'tests.inbox',
        title,
        body,
        recipient_ids: [userId],
        channels: ['in_app'],
      });
    }
    for (const dir of SCREENSHOT_DIRS) mkdirSync(dir, { recursive: true });
    for (const [name, width, height] of [
      ['desktop', 1280, 720],
      ['phone', 390, 780],
    ] as const) {
      const page = await openPage(userId, width, height);
      await bell(page).click();
      await expect.poll(() => rows(page).count()).toBe(3);
      const panel = await page.locator('notify-bell [role=dialog]').boundingBox();
      // The panel lies within the viewport at both widths.
      expect(panel).not.toBeNull();
      expect((panel?.x ?? -1) >= 0 && (panel?.x ?? 0) + (panel?.width ?? 0) <= width).toBe(true);
      const image = await page.screenshot();
      for (const dir of SCREENSHOT_DIRS) writeFileSync(join(dir, `notify-bell-${name}.png`), image);
      await page.close();
    }
  }, 90_000);
});

describe('the settings view (<notify-settings>, reached from the bell panel)', () => {
  /** The bell's panel open (or opened), its Settings button pressed: the settings view, once loaded. */
  const openSettings = async (page: Page) => {
    if ((await bell(page).getAttribute('aria-expanded')) !== 'true') await bell(page).click();
    await page.locator('notify-bell button', { hasText: 'Settings' }).click();
    const settings = page.locator('notify-bell notify-settings');
    // Loaded: the time zone shows (the stored one, else the browser's).
    await expect
      .poll(() => settings.getByRole('combobox', { name: 'Your time zone' }).inputValue())
      .not.toBe('');
    return settings;
  };
  const preferencesOf = async (userId: string) =>
    fetch(`${runtime.httpUrl}/preferences`, {
      headers: { authorization: `Bearer ${await runtime.mintUserToken(userId)}` },
    }).then((response) => response.json() as Promise<Record<string, unknown>>);

  it('a user sets a time zone, quiet hours, a digest and a channel rule, saves, and GET /preferences returns them', async () => {
    const userId = `elements-settings-${run}`;
    const page = await openPage(userId);
    const settings = await openSettings(page);
    expect(await focused(page)()).toBe('Settings');
    const browserZone = (await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')) as string;
    const zone = settings.getByRole('combobox', { name: 'Your time zone' });
    expect(await zone.inputValue()).toBe(browserZone);
    await zone.selectOption('Europe/Berlin');

    await settings.getByRole('button', { name: 'Add quiet hours' }).click();
    const window = settings.getByRole('group', { name: 'Quiet window 1' });
    for (const day of ['Sat', 'Sun']) await window.getByRole('checkbox', { name: day }).uncheck();
    await window.getByLabel('From').fill('22:30');
    await window.getByLabel('To').fill('07:00');

    await settings.getByRole('button', { name: 'Add a digest' }).click();
    const digest = settings.getByRole('group', { name: 'Digest 1' });
    await digest.getByRole('combobox', { name: 'Applies to' }).selectOption({ label: 'Category' });
    await digest.getByRole('textbox', { name: 'Pattern' }).fill('marketing.*');
    await digest.getByRole('combobox', { name: 'Send' }).selectOption({ label: 'Daily at a time' });
    await digest.getByLabel('At', { exact: true }).fill('08:15');

    await settings.getByRole('button', { name: 'Add a channel rule' }).click();
    const rule = settings.getByRole('group', { name: 'Channel rule 1' });
    await rule.getByRole('textbox', { name: 'Pattern' }).fill('social.*');
    await rule.getByRole('combobox', { name: 'Push' }).selectOption({ label: 'Off' });

    // Save with the keyboard; the result is announced in the status region.
    await settings.getByRole('button', { name: 'Save' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => settings.getByRole('status').textContent()).toBe('Saved.');

    const stored = await preferencesOf(userId);
    expect(stored).toMatchObject({
      time_zone: 'Europe/Berlin',
      quiet_hours: { windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '22:30', end: '07:00' }] },
      digests: [{ category: 'marketing.*', at: '08:15' }],
      rules: [{ event_type: 'social.*', channels: { push: false } }],
    });

    // Opened again, the panel shows what is stored.
    await page.locator('notify-bell button', { hasText: 'Back to notifications' }).click();
    const again = await openSettings(page);
    expect(await again.getByRole('combobox', { name: 'Your time zone' }).inputValue()).toBe('Europe/Berlin');
    expect(
      await again
        .getByRole('group', { name: 'Digest 1' })
        .getByRole('textbox', { name: 'Pattern' })
        .inputValue(),
    ).toBe('marketing.*');
    await page.close();
  }, 90_000);

  it('a refused change (a required default) shows the service’s reason on the rule and keeps the form', async () => {
    const userId = `elements-settings-refused-${run}`;
    const prefix = `sec${run}`;
    await service.setPreferenceDefaults({
      rules: [
        { event_type: `${prefix}.*`, required: true },
        {
          category: `${prefix}.digests`,
          channels: { push: true },
          digest: { at: '09:00' },
          fallback: [{ channel: 'push', after_secs: 600, unless: 'read' }],
        },
      ],
      quiet_hours: { urgent: true },
    });
    const page = await openPage(userId);
    const settings = await openSettings(page);
    // The service defaults, read-only.
    expect(await settings.getByRole('group', { name: 'Set by the service' }).textContent()).toContain(
      `Event type ${prefix}.*: required`,
    );
    expect(await settings.getByRole('group', { name: 'Set by the service' }).textContent()).toContain(
      `Category ${prefix}.digests: Push on, digest daily at 09:00, then push after 600 s`,
    );
    expect(await settings.getByRole('group', { name: 'Quiet hours' }).textContent()).toContain(
      'urgent notifications come through',
    );

    await settings.getByRole('button', { name: 'Add a channel rule' }).click();
    const rule = settings.getByRole('group', { name: 'Channel rule 1' });
    const pattern = rule.getByRole('textbox', { name: 'Pattern' });
    await pattern.fill(`${prefix}.login`);
    expect(await rule.textContent()).toContain('Required by the service');
    await rule.getByRole('combobox', { name: 'In-app' }).selectOption({ label: 'Off' });
    await settings.getByRole('button', { name: 'Save' }).click();

    const alert = settings.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('Not saved');
    expect(await alert.textContent()).toContain(
      `Channel rule 1: ${prefix}.* is required and cannot be turned off`,
    );
    // The form is as the user left it, the refused rule marked.
    expect(await pattern.inputValue()).toBe(`${prefix}.login`);
    expect(await pattern.getAttribute('aria-invalid')).toBe('true');
    expect(await rule.getByRole('combobox', { name: 'In-app' }).inputValue()).toBe('off');
    expect(await settings.getByRole('status').textContent()).toBe('');
    expect((await preferencesOf(userId)).rules).toEqual([]);
    await page.close();
  }, 90_000);

  it('passes axe-core and renders at desktop and phone widths (screenshots)', async () => {
    const userId = `elements-settings-shots-${run}`;
    const token = await runtime.mintUserToken(userId);
    await fetch(`${runtime.httpUrl}/preferences`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        rules: [{ category: 'social.*', channels: { push: false, toast: true } }],
        time_zone: 'Europe/Berlin',
        quiet_hours: {
          windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '22:00', end: '07:00' }],
        },
        digests: [{ event_type: 'marketing.*', at: '09:00' }],
      }),
    });
    for (const dir of SCREENSHOT_DIRS) mkdirSync(dir, { recursive: true });
    for (const [name, width, height] of [
      ['desktop', 1280, 900],
      ['phone', 390, 844],
    ] as const) {
      const page = await openPage(userId, width, height);
      const settings = await openSettings(page);
      await settings.getByRole('group', { name: 'Quiet window 1' }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      const panel = await page.locator('notify-bell [role=dialog]').boundingBox();
      expect((panel?.x ?? -1) >= 0 && (panel?.x ?? 0) + (panel?.width ?? 0) <= width).toBe(true);
      const image = await page.screenshot();
      for (const dir of SCREENSHOT_DIRS) writeFileSync(join(dir, `notify-settings-${name}.png`), image);
      await page.close();
    }
  }, 120_000);
});
