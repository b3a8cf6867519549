/**
 * The SDK as a package: client/package.json's entry points exist after the build, load in Node as ES modules,
 * come with type declarations, and depend on nothing at run time; `npm pack` makes a tarball that installs
 * offline in a fresh project, where both entry points import and typecheck.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../../client/build';

const clientDir = join(import.meta.dirname, '../../../client');
const manifest = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8')) as {
  name: string;
  type: string;
  exports: Record<string, { types: string; default: string }>;
  dependencies?: Record<string, string>;
};

/**
 * A build of its own, laid out like the package (client/dist → <tmp>/dist, with client/package.json and src),
 * so that packing it leaves client/dist, which other tests read, alone.
 */
const packageDir = mkdtempSync(join(tmpdir(), 'notify-client-'));
beforeAll(async () => {
  cpSync(join(clientDir, 'package.json'), join(packageDir, 'package.json'));
  cpSync(join(clientDir, 'src'), join(packageDir, 'src'), { recursive: true });
  await buildClient(join(packageDir, 'dist'));
}, 60_000);
afterAll(() => rmSync(packageDir, { recursive: true, force: true }));

describe('@notify/client package', () => {
  it('is an ES module package without runtime dependencies', () => {
    expect(manifest).toMatchObject({ name: '@notify/client', type: 'module' });
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('has a built file and its declarations for every entry point', () => {
    for (const entry of Object.values(manifest.exports)) {
      expect(existsSync(join(packageDir, entry.default))).toBe(true);
      expect(existsSync(join(packageDir, entry.types))).toBe(true);
    }
  });

  it('loads in Node from dist, with the documented exports', async () => {
    const app = await import(pathToFileURL(join(packageDir, manifest.exports['.']?.default ?? '')).href);
    for (const name of [
      'createNotify',
      'RealtimeClient',
      'NotifyApi',
      'InboxStore',
      'NotifyError',
      'TokenSource',
    ]) {
      expect(typeof app[name]).toBe('function');
    }
    const service = await import(
      pathToFileURL(join(packageDir, manifest.exports['./service']?.default ?? '')).href
    );
    expect(typeof service.NotifyService).toBe('function');
    // The web components' module imports where there is no DOM (server rendering); only defining them needs one.
    const elements = await import(
      pathToFileURL(join(packageDir, manifest.exports['./elements']?.default ?? '')).href
    );
    expect(elements.NOTIFY_ELEMENT_TAGS).toEqual([
      'notify-bell',
      'notify-inbox',
      'notify-toasts',
      'notify-settings',
    ]);
    expect(() => elements.defineNotifyElements()).toThrow(/needs a browser/);
  });

  it('imports nothing outside itself', () => {
    for (const entry of Object.values(manifest.exports)) {
      const code = readFileSync(join(packageDir, entry.default), 'utf8');
      expect(code.match(/^import .* from ['"][^.][^'"]*['"]/gm) ?? []).toEqual([]);
    }
  });

  it('packs with npm pack into a tarball that installs offline in a fresh project and imports there', () => {
    const work = mkdtempSync(join(tmpdir(), 'notify-client-pack-'));
    try {
      const npm = (args: string[], cwd: string) =>
        execFileSync('npm', [...args, '--no-audit', '--no-fund'], { cwd, encoding: 'utf8', stdio: 'pipe' });
      npm(['pack', '--pack-destination', work], packageDir);
      const tarballs = readdirSync(work).filter((file) => file.endsWith('.tgz'));
      expect(tarballs).toEqual(['notify-client-0.1.0.tgz']);
      const project = join(work, 'app');
      mkdirSync(project);
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true, type: 'module' }),
      );
      // Offline: the package needs nothing from the registry.
      npm(['install', '--offline', join(work, tarballs[0] as string)], project);
      writeFileSync(
        join(project, 'main.ts'),
        [
          "import { NotifyApi, NotifyError, type Topic } from '@notify/client';",
          "import { NotifyService } from '@notify/client/service';",
          "const api = new NotifyApi({ apiUrl: 'http://127.0.0.1:1/api/v1', getToken: async () => 't' });",
          "const service = new NotifyService({ apiUrl: 'http://127.0.0.1:1/api/v1', token: 't' });",
          'const topic: Topic | undefined = undefined;',
          'console.log(typeof api.getFeed, typeof service.listTopics, new NotifyError("validation", "m").code, topic);',
          '',
        ].join('\n'),
      );
      execFileSync(
        join(import.meta.dirname, '../../../node_modules/.bin/tsc'),
        [
          '--noEmit',
          '--strict',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          '--target',
          'es2022',
          'main.ts',
        ],
        { cwd: project, encoding: 'utf8', stdio: 'pipe' },
      );
      const imported = execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          "const app = await import('@notify/client'); const service = await import('@notify/client/service');" +
            ' console.log(JSON.stringify([Object.keys(app).sort(), Object.keys(service)]));',
        ],
        { cwd: project, encoding: 'utf8' },
      );
      expect(JSON.parse(imported)).toEqual([
        ['InboxStore', 'NotifyApi', 'NotifyError', 'RealtimeClient', 'TokenSource', 'createNotify'],
        ['NotifyService'],
      ]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
