import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSourceMappedStacks } from '../../../lambdas/core/source-mapped-stacks';
import { LAMBDA_ESBUILD_OPTIONS } from '../../../lib/constructs/bundling';
import { repoRoot } from '../../../lib/paths';

const FIXTURE = 'test/support/fixtures/stack-fixture.ts';
/** The line of `throw new Error('deep failure')` in the fixture, and of `failDeep()`'s call. */
const THROW_LINE = 8;
const CALL_LINE = 11;

let dir: string;
let bundle: string;

/** Runs `script` (an ES module importing the bundle as `fixture`) in a fresh node; what it printed. */
const printed = (script: string, file = bundle) =>
  promisify(execFile)(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import * as fixture from ${JSON.stringify(pathToFileURL(file).href)};\n${script}`,
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

  it("keep V8's async and constructor prefixes on frames mapped to their source lines", async () => {
    // Names come from the map where it has one for the position; an async arrow function resumed after an
    // await keeps its minified name, as with Node's own --enable-source-maps.
    const late = (await run('process.stdout.write(await fixture.stackOfAsyncFailure());')).split('\n');
    expect(late[0]).toBe('Error: late failure');
    expect(late[1]).toMatch(new RegExp(`^    at \\S+ \\(.*${FIXTURE}:45:\\d+\\)$`));
    expect(late[2]).toMatch(new RegExp(`^    at async \\S+ \\(.*${FIXTURE}:50:\\d+\\)$`));
    const widget = (await run('process.stdout.write(fixture.stackOfWidget());')).split('\n');
    expect(widget[0]).toBe('Error: widget failure');
    expect(widget[1]).toMatch(new RegExp(`^    at new \\S+ \\(.*${FIXTURE}:31:\\d+\\)$`));
    expect(widget[2]).toMatch(new RegExp(`^    at \\S+ \\(.*${FIXTURE}:37:\\d+\\)$`));
    expect([...late, ...widget].join('\n')).not.toContain('index.mjs');
  });

  it("fall back to V8's frames, never throw, when the map cannot place a frame", async () => {
    // A map whose only segment has no source (valid in the format; esbuild does not write one today): mapping
    // must not fail, or every `error.stack` read — and so every error log — would throw.
    const other = path.join(dir, 'sourceless');
    await mkdir(other, { recursive: true });
    const file = path.join(other, 'index.mjs');
    await copyFile(bundle, file);
    await writeFile(`${file}.map`, JSON.stringify({ version: 3, sources: [], names: [], mappings: ';A' }));
    const { stdout, stderr } = await printed(
      'process.stdout.write(fixture.stackOfFailure()); fixture.logFailure();',
      file,
    );
    const lines = stdout.split('\n');
    expect(lines[0]).toBe('Error: deep failure');
    expect(lines[1]).toMatch(/^ {4}at .*index\.mjs:\d+:\d+\)?$/);
    expect(JSON.parse(stderr.trim())).toMatchObject({
      message: 'call failed',
      error: { message: 'deep failure' },
    });
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
