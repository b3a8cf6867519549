/**
 * The demo page (docs/demo.md) in headless Chromium against `npm start` with an HS256 secret of its own in
 * SERVICE__AUTH__* (a child process: one runtime per process, and test/e2e/demo.test.ts holds this one's). The
 * runtime mints nothing for the page then, so the page asks its user for a token, made with `npm run -s token`
 * and the same settings, as docs/demo.md tells.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/lambda/runner';
import { apiClient } from '../support/api';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { type RuntimeProcess, runtimeProcessEnv, startRuntimeProcess } from '../support/runtime-process';
import { authEnvFor, serviceToken, TEST_HS256_SECRET } from '../support/tokens';

const work = mkdtempSync(join(tmpdir(), 'notify-demo-own-auth-'));
const authEnv = authEnvFor(undefined);
let child: RuntimeProcess;
let browser: TestBrowser;
const api = apiClient(() => child.restUrl);

beforeAll(async () => {
  [child, browser] = await Promise.all([
    startRuntimeProcess({ work, dataDir: join(work, 'data'), env: authEnv }),
    launchBrowser(),
  ]);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await child?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** `npm run -s token -- --user <user>` with the runtime's own auth settings. */
const npmToken = async (user: string): Promise<string> => {
  const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'token', '--', '--user', user], {
    cwd: REPO_ROOT,
    env: { ...runtimeProcessEnv(work), ...authEnv },
    encoding: 'utf8',
  });
  return stdout.trim();
};

describe('the demo page with SERVICE__AUTH__* set', () => {
  it('asks for a token instead of minting one, and works with the one its user pastes', async () => {
    const page = await browser.context.newPage();
    page.on('pageerror', (error) => process.stderr.write(`demo page: ${error.message}\n`));
    const tokenAnswers: number[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/demo/api/token')) tokenAnswers.push(response.status());
    });
    await page.goto(`http://127.0.0.1:${child.port}/demo/?user=someone-else&room=lobby`);
    await page.locator('#token-ask').waitFor();
    expect(await page.locator('#token-reason').textContent()).toContain('npm run -s token');
    expect(tokenAnswers).toEqual([404]);
    // "Send a test notification" needs the runtime's own service token: it says so instead.
    await page.locator('#send-unavailable').waitFor();
    expect(await page.locator('#send button[type="submit"]').isDisabled()).toBe(true);

    await page.locator('#token-input').fill(await npmToken('pasty'));
    await page.locator('#token-form button[type="submit"]').click();
    await page.locator('#state[data-state="connected"]').waitFor();
    await page.locator('#token-ask').waitFor({ state: 'hidden' });
    // The user is the token's subject, whatever the query string said.
    expect(await page.locator('#user').textContent()).toBe('pasty');
    await page.locator('#presence li[data-user="pasty"][data-status="online"]').waitFor();

    const service = await serviceToken(TEST_HS256_SECRET, { sub: 'tests', scope: 'notifications:write' });
    const created = await api('POST', '/notifications', service, {
      event_type: 'demo.test',
      title: 'Pasted and working',
      channels: ['in_app', 'toast'],
      recipient_ids: ['pasty'],
    });
    expect(created.status).toBe(202);
    await page.locator('.toast', { hasText: 'Pasted and working' }).waitFor();
    await page.locator('#bell[data-count="1"]').waitFor();

    // A reload keeps the tab's token: connected again without asking.
    await page.reload();
    await page.locator('#state[data-state="connected"]').waitFor();
    expect(await page.locator('#token-ask').isHidden()).toBe(true);
    await page.locator('#inbox li', { hasText: 'Pasted and working' }).waitFor();
    expect(tokenAnswers).toEqual([404, 404]);
    await page.close();
  }, 90_000);
});
