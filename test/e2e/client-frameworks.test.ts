/**
 * The SDK from plain HTML, React, Vue and Svelte, in headless Chromium against the local runtime, with the code
 * docs/client.md shows: client/examples/ (test/unit/client/examples-docs.test.ts keeps the two equal). The plain
 * page imports the package's two files; each framework's example is bundled with esbuild as an app would (Svelte
 * compiled by `svelte/compiler`, Vue's template compiled in the page), binds the headless inbox store its
 * framework's way and puts `<notify-bell>` in its template. A notification created over HTTP shows in the
 * list; marking it read there moves the count, the bell's badge and the service's unread count.
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

/** The package's files as client/dist has them: `index.js` and `elements.js`, self-contained ES modules. */
const bundlePackage = async (): Promise<Record<string, string>> => {
  const result = await build({
    entryPoints: ['index', 'elements'].map((entry) => join(REPO_ROOT, 'client', 'src', `${entry}.ts`)),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    outdir: '/package',
    write: false,
    logLevel: 'warning',
  });
  return Object.fromEntries(result.outputFiles.map((file) => [file.path.split('/').pop(), file.text]));
};

/** The plain page's `notify-config.js`: what the example leaves to the app, here from the page's hash. */
const PLAIN_CONFIG = `const settings = new URLSearchParams(location.hash.slice(1));
export const apiUrl = settings.get('api');
export const wsUrl = settings.get('ws');
export const getToken = async () => settings.get('token');
`;

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
  const [bundles, packageFiles] = await Promise.all([
    Promise.all(frameworks.map(bundleApp)),
    bundlePackage(),
  ]);
  [runtime, browser] = await Promise.all([startTestRuntime(), launchBrowser()]);
  service = new NotifyService({
    apiUrl: runtime.httpUrl,
    token: await runtime.mintServiceToken('tests', ['notifications:write']),
  });
  const script = (body = '') => ({ type: 'text/javascript', body });
  site = await startStaticServer({
    ...Object.fromEntries(
      frameworks.flatMap((framework, index) => [
        [`/${framework}`, { type: 'text/html', body: page(framework) }],
        [`/${framework}.js`, script(bundles[index])],
      ]),
    ),
    '/plain/': { type: 'text/html', body: readFileSync(join(EXAMPLES, 'plain.html'), 'utf8') },
    '/plain/notify/index.js': script(packageFiles['index.js']),
    '/plain/notify/elements.js': script(packageFiles['elements.js']),
    '/plain/notify-config.js': script(PLAIN_CONFIG),
  });
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

const unreadCount = async (userId: string): Promise<number> => {
  const token = await runtime.mintUserToken(userId);
  const answer = await fetch(`${runtime.httpUrl}/notifications/unread-count`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await answer.json()) as { count: number }).count;
};

describe('the SDK and the web components from plain HTML and from a framework', () => {
  it('plain HTML: a notification created over HTTP shows in the inline inbox; marking it read there updates the bell', async () => {
    const userId = `frameworks-plain-${run}`;
    const app = await browser.context.newPage();
    app.on('pageerror', (error) => process.stderr.write(`plain page: ${error.message}\n`));
    const settings = new URLSearchParams({
      api: runtime.httpUrl,
      ws: runtime.wsUrl,
      token: await runtime.mintUserToken(userId),
    });
    await app.goto(`${site.origin}/plain/#${settings}`);
    const bell = app.locator('notify-bell button.bell');
    await expect.poll(() => bell.getAttribute('aria-label')).toBe('Notifications');

    const title = 'Deploy plain finished';
    await sendTitled(service, userId, title);
    const titles = () => app.locator('body > notify-inbox li .title').allTextContents();
    await expect.poll(titles).toEqual([title]);
    await expect.poll(() => bell.getAttribute('aria-label')).toBe('Notifications, 1 unread');
    await app.locator(`body > notify-inbox button[aria-label="Mark read: ${title}"]`).click();
    await expect.poll(() => bell.getAttribute('aria-label')).toBe('Notifications');
    // The SDK shows the change before the service confirms it: the service's count follows.
    await expect.poll(() => unreadCount(userId)).toBe(0);
    await app.close();
  }, 90_000);

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
      await expect.poll(() => unreadCount(userId)).toBe(1);
      await app.close();
    },
    90_000,
  );
});
