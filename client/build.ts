/**
 * Builds the SDK into client/dist (ESM for browsers, React Native and Node, with .d.ts) and measures the
 * realtime part as an app's bundler would ship it. Run from the repository: `npm run build:client`.
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

/** Builds into `outdir` (client/dist by default; tests build elsewhere, so a running demo keeps its files). */
export const buildClient = async (outdir = join(clientDir, 'dist')): Promise<void> => {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: [join(clientDir, 'src/index.ts'), join(clientDir, 'src/service.ts')],
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

/** Bytes of `exports` of the SDK's entry, bundled and minified as an app would, raw and gzipped. */
export const bundleSize = async (exports: string): Promise<{ minified: number; gzipped: number }> => {
  const result = await build({
    stdin: { contents: `export { ${exports} } from './src/index.ts';`, resolveDir: clientDir, loader: 'ts' },
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

if (process.argv[1] === import.meta.filename) {
  await buildClient();
  const realtime = await realtimeSize();
  const all = await bundleSize('createNotify');
  console.log(
    `client/dist built; realtime ${(realtime.gzipped / 1024).toFixed(1)} KiB gzipped ` +
      `(budget ${REALTIME_BUDGET_BYTES / 1024} KiB), whole app SDK ${(all.gzipped / 1024).toFixed(1)} KiB`,
  );
}
