/**
 * A real browser for tests: Debian's Chromium (`apt-get install chromium`, what .ci/run installs) driven by
 * playwright-core, headless, in a fresh profile removed on close. Also a plain static server, to serve a page
 * from a second origin.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.NOTIFY_CHROMIUM_PATH || '/usr/bin/chromium';

/** Nothing but the page under test talks to the network; no GPU, no sandbox (containers), no QUIC. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium with a fresh --user-data-dir (playwright passes it and --headless). */
export const launchBrowser = async (): Promise<TestBrowser> => {
  const profile = mkdtempSync(join(tmpdir(), 'notify-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1100, height: 800 },
    });
    // Fail a wait with its own message before the test's timeout does.
    context.setDefaultTimeout(15_000);
    return {
      context,
      close: async () => {
        await context.close().catch(() => {});
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
};

export interface StaticFile {
  readonly type: string;
  readonly body: string;
}

/** Serves `files` (path → content) on 127.0.0.1, a free port: another origin than the runtime's. */
export const startStaticServer = async (files: Readonly<Record<string, StaticFile>>) => {
  const server = createServer((request, response) => {
    const file = files[(request.url ?? '/').split('?')[0] ?? '/'];
    request.resume();
    if (!file) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': file.type, 'content-length': Buffer.byteLength(file.body) });
    response.end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

/**
 * A page's module code that creates the SDK from the page's hash (`api`, `ws` and `token`) and registers the web
 * components: `notify` (also `window.notify`), not yet started. `from`: where the page imports them from.
 */
export const notifySetupModule = (from: { readonly sdk: string; readonly elements: string }) => `
      import { createNotify } from '${from.sdk}';
      import { defineNotifyElements } from '${from.elements}';
      const settings = new URLSearchParams(location.hash.slice(1));
      const notify = createNotify({
        apiUrl: settings.get('api'),
        wsUrl: settings.get('ws'),
        getToken: async () => settings.get('token'),
      });
      defineNotifyElements({ notify });
      window.notify = notify;`;
