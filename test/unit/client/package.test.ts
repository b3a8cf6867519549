/**
 * The SDK as a package: client/package.json's entry points exist after the build, load in Node as ES modules,
 * come with type declarations, and depend on nothing at run time.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

/** A build of its own, laid out like the package (client/dist → <tmp>/dist). */
const packageDir = mkdtempSync(join(tmpdir(), 'notify-client-'));
beforeAll(() => buildClient(join(packageDir, 'dist')), 60_000);
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
  });

  it('imports nothing outside itself', () => {
    for (const entry of Object.values(manifest.exports)) {
      const code = readFileSync(join(packageDir, entry.default), 'utf8');
      expect(code.match(/^import .* from ['"][^.][^'"]*['"]/gm) ?? []).toEqual([]);
    }
  });
});
