/**
 * Builds the SDK into client/dist (ESM for browsers, React Native and Node, with .d.ts) and measures the
 * realtime part, and the web components with the SDK, as an app's bundler would ship them. Run from the
 * repository: `npm run build:client`.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const clientDir = import.meta.dirname;
const root = join(clientDir, '..');

/** The budget of the realtime part, minified and gzipped. */
export const REALTIME_BUDGET_BYTES = 8 * 1024;
/** The budget of the web components together with the whole app SDK, minified and gzipped. */
export const ELEMENTS_BUDGET_BYTES = 20 * 1024;

/** Builds into `outdir` (client/dist by default; tests build elsewhere, so a running demo keeps its files). */
export const buildClient = async (outdir = join(clientDir, 'dist')): Promise<void> => {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: ['index', 'service', 'elements'].map((entry) => join(clientDir, `src/${entry}.ts`)),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    sourcemap: true,
    outdir,
    logLevel: 'warning',
  });
  const tsc = spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', clientDir, '--outDir', outdir], {
    encoding: 'utf8',
  });
  if (tsc.status !== 0) throw new Error(`declarations failed:\n${tsc.stdout}${tsc.stderr}`);
};

/** Bytes of `exports` of the SDK's `entry`, bundled and minified as an app would, raw and gzipped. */
export const bundleSize = (exports: string, entry = 'index') =>
  minifiedSize(`export { ${exports} } from './src/${entry}.ts';`);

/** Bytes of a module importing from the SDK's sources, bundled and minified, raw and gzipped. */
const minifiedSize = async (contents: string): Promise<{ minified: number; gzipped: number }> => {
  const result = await build({
    stdin: { contents, resolveDir: clientDir, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    logLevel: 'warning',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { minified: code.byteLength, gzipped: gzipSync(code, { level: 9 }).byteLength };
};

/** The realtime part: what an app that only uses the WebSocket connection ships. */
export const realtimeSize = () => bundleSize('RealtimeClient');

/** The web components and the whole app SDK they run on: what a page using `<notify-bell>` ships. */
export const elementsSize = () =>
  minifiedSize(
    "export { createNotify } from './src/index.ts'; export { defineNotifyElements } from './src/elements.ts';",
  );

if (process.argv[1] === import.meta.filename) {
  await buildClient();
  const realtime = await realtimeSize();
  const all = await bundleSize('createNotify');
  const elements = await elementsSize();
  const kib = (bytes: number) => (bytes / 1024).toFixed(1);
  console.log(
    `client/dist built; realtime ${kib(realtime.gzipped)} KiB gzipped (budget ${kib(REALTIME_BUDGET_BYTES)} KiB), ` +
      `whole app SDK ${kib(all.gzipped)} KiB, with the web components ${kib(elements.gzipped)} KiB ` +
      `(budget ${kib(ELEMENTS_BUDGET_BYTES)} KiB)`,
  );
}
