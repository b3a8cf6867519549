import { execFile } from 'node:child_process';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSourceMappedStacks } from '../../lambdas/core/source-mapped-stacks';
import { LAMBDA_ESBUILD_OPTIONS } from '../../lib/constructs/bundling';
import { repoRoot } from '../../lib/paths';

const FIXTURE = 'test/support/fixtures/stack-fixture.ts';
/** The line of `throw new Error('deep failure')` in the fixture, and of `failDeep()`'s call. */
const THROW_LINE = 8;
const CALL_LINE = 11;

let dir: string;
let bundle: string;

/** Runs `script` (an ES module importing the bundle as `fixture`) in a fresh node; what it printed. */
const printed = (script: string) =>
  promisify(execFile)(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import * as fixture from ${JSON.stringify(pathToFileURL(bundle).href)};\n${script}`,
    ],
    { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'ERROR' } },
  );

const run = async (script: string): Promise<string> => (await printed(script)).stdout;

describe('stack traces of a bundled function', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'notify-stacks-'));
    bundle = path.join(dir, 'index.mjs');
    // The stack's options (lib/constructs/notify-function.ts): minified ESM with a source map beside it.
    await build({
      ...LAMBDA_ESBUILD_OPTIONS,
      entryPoints: [path.join(repoRoot, FIXTURE)],
      outfile: bundle,
      logLevel: 'error',
    });
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('name the source files and lines, not the minified bundle, without NODE_OPTIONS', async () => {
    const stack = await run('process.stdout.write(fixture.stackOfFailure());');
    const lines = stack.split('\n');
    expect(lines[0]).toBe('Error: deep failure');
    expect(lines[1]).toMatch(new RegExp(`^    at failDeep \\(.*${FIXTURE}:${THROW_LINE}:\\d+\\)$`));
    expect(lines[2]).toMatch(new RegExp(`^    at callDeep \\(.*${FIXTURE}:${CALL_LINE}:\\d+\\)$`));
    expect(stack).not.toContain('index.mjs');
  });

  it('give the logged error its source location, as Powertools reads it from the stack', async () => {
    // Powertools writes error records to stderr.
    const { stderr } = await printed('fixture.logFailure();');
    const record = JSON.parse(stderr.trim()) as { error: { location: string; stack: string } };
    expect(record.error.location).toMatch(new RegExp(`${FIXTURE}:${THROW_LINE}$`));
    expect(record.error.stack).toContain(`${FIXTURE}:${CALL_LINE}:`);
  });

  it('read the map only when a stack is formatted, not when the bundle loads', async () => {
    // The map is moved away after the bundle loaded: a stack formatted then cannot be mapped, so nothing was read
    // at load (with --enable-source-maps Node reads it while loading: 10–20 ms of every cold start).
    const moved = `${bundle}.map.moved`;
    const stack = await run(
      `const { rename } = await import('node:fs/promises');
       await rename(${JSON.stringify(`${bundle}.map`)}, ${JSON.stringify(moved)});
       process.stdout.write(fixture.stackOfFailure());`,
    );
    await rename(moved, `${bundle}.map`);
    expect(stack.split('\n')[0]).toBe('Error: deep failure');
    expect(stack).toContain('index.mjs:');
    expect(stack).not.toContain(FIXTURE);
  });

  it('are left to the loader where the code runs unbundled (local runtime, tests): no map beside the module', () => {
    const before = Error.prepareStackTrace;
    expect(installSourceMappedStacks()).toBe(false);
    expect(Error.prepareStackTrace).toBe(before);
  });
});
