/**
 * The SDK from React, Vue and Svelte, in headless Chromium against the local runtime: each of
 * client/examples/ (the code docs/client.md shows, test/unit/client/examples-docs.test.ts keeps them equal) is
 * bundled with esbuild as an app would (Svelte compiled by `svelte/compiler`, Vue's template compiled in the
 * page), binds the headless inbox store its framework's way and puts `<notify-bell>` in its template. A
 * notification created over HTTP shows in the framework's list; marking it read there moves the count, the
 * bell's badge and the service's unread count.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import type { Page } from 'playwright-core';
import { compile } from 'svelte/compiler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotifyService } from '../../client/src/service';
import { REPO_ROOT } from '../../local/lambda/runner';
import { launchBrowser, notifySetupModule, startStaticServer, type TestBrowser } from '../support/browser';
import { sendTitled } from '../support/client-sdk';
import { type Runtime, startTestRuntime } from '../support/runtime';

const EXAMPLES = join(REPO_ROOT, 'client', 'examples');
const FRAMEWORKS = { react: 'react.tsx', vue: 'vue.ts', svelte: 'svelte.ts' } as const;
type Framework = keyof typeof FRAMEWORKS;

/** What an app's bundler does with the package's names, and with `.svelte` files (svelte/compiler). */
const appPlugin: Plugin = {
  name: 'notify-app',
  setup(bundler) {
    bundler.onResolve({ filter: /^@notify\/client(\/elements)?$/ }, ({ path }) => ({
      path: join(REPO_ROOT, 'client', 'src', path.endsWith('/elements') ? 'elements.ts' : 'index.ts'),
    }));
    bundler.onLoad({ filter: /\.svelte$/ }, ({ path }) => ({
      contents: compile(readFileSync(path, 'utf8'), { filename: path, generate: 'client' }).js.code,
      loader: 'js',
    }));
  },
};

/** The app: the SDK created and the elements registered, then the framework's component mounted in #app. */
const bundleApp = async (framework: Framework): Promise<string> => {
  const result = await build({
    stdin: {
      contents: `${notifySetupModule({ sdk: '@notify/client', elements: '@notify/client/elements' })}
        import { mountInbox } from './${FRAMEWORKS[framework]}';
        mountInbox(document.getElementById('app'), notify);
        notify.start();`,
      resolveDir: EXAMPLES,
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    alias: { vue: 'vue/dist/vue.esm-bundler.js' },
    define: {
      'process.env.NODE_ENV': '"production"',
      __VUE_OPTIONS_API__: 'true',
      __VUE_PROD_DEVTOOLS__: 'false',
      __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
    },
    plugins: [appPlugin],
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0]?.text ?? '';
};

const page = (framework: Framework) => `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>${framework} app with Notify</title></head>
  <body><main id="app"></main><script type="module" src="/${framework}.js"></script></body>
</html>
`;

let runtime: Runtime;
let browser: TestBrowser;
let service: NotifyService;
let site: Awaited<ReturnType<typeof startStaticServer>>;
const run = Date.now();

beforeAll(async () => {
  const frameworks = Object.keys(FRAMEWORKS) as Framework[];
  const bundles = await Promise.all(frameworks.map(bundleApp));
  [runtime, browser] = await Promise.all([startTestRuntime(), launchBrowser()]);
  service = new NotifyService({
    apiUrl: runtime.httpUrl,
    token: await runtime.mintServiceToken('tests', ['notifications:write']),
  });
  site = await startStaticServer(
    Object.fromEntries(
      frameworks.flatMap((framework, index) => [
        [`/${framework}`, { type: 'text/html', body: page(framework) }],
        [`/${framework}.js`, { type: 'text/javascript', body: bundles[index] ?? '' }],
      ]),
    ),
  );
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await runtime?.stop();
});

const openApp = async (framework: Framework, userId: string): Promise<Page> => {
  const tab = await browser.context.newPage();
  tab.on('pageerror', (error) => process.stderr.write(`${framework} app: ${error.message}\n`));
  const settings = new URLSearchParams({
    api: runtime.httpUrl,
    ws: runtime.wsUrl,
    token: await runtime.mintUserToken(userId),
  });
  await tab.goto(`${site.origin}/${framework}#${settings}`);
  await tab.waitForFunction("window.notify?.realtime.state === 'connected'");
  return tab;
};

describe('the SDK and the web components from a framework', () => {
  it.each(Object.keys(FRAMEWORKS) as Framework[])(
    '%s: a notification created over HTTP shows in its list; marking it read there updates the count',
    async (framework) => {
      const userId = `frameworks-${framework}-${run}`;
      await sendTitled(service, userId, 'Earlier news');
      const app = await openApp(framework, userId);
      const titles = () => app.locator('#app > ul > li').allTextContents();
      const unread = app.locator('#app .unread');
      const bell = app.locator('#app notify-bell button.bell');
      await expect.poll(titles).toEqual([expect.stringContaining('Earlier news')]);

      // Created over HTTP while the app is open: the realtime frame refreshes the store, the framework renders.
      const title = `Deploy ${framework} finished`;
      await sendTitled(service, userId, title);
      await expect
        .poll(titles)
        .toEqual([expect.stringContaining(title), expect.stringContaining('Earlier news')]);
      await expect.poll(() => unread.textContent()).toBe('2 unread');
      // The web component inside the framework's template runs on the same store.
      await expect.poll(() => bell.getAttribute('aria-label')).toBe('Notifications, 2 unread');

      await app.locator('#app button', { hasText: `Mark read: ${title}` }).click();
      await expect.poll(() => unread.textContent()).toBe('1 unread');
      await expect.poll(() => bell.getAttribute('aria-label')).toBe('Notifications, 1 unread');
      expect(await app.locator('#app > ul > li[data-read=true]').textContent()).toContain(title);
      const token = await runtime.mintUserToken(userId);
      const count = await fetch(`${runtime.httpUrl}/notifications/unread-count`, {
        headers: { authorization: `Bearer ${token}` },
      }).then((response) => response.json() as Promise<{ count: number }>);
      expect(count.count).toBe(1);
      await app.close();
    },
    90_000,
  );
});
