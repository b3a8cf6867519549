import path from 'node:path';
import type { BuildOptions } from 'esbuild';
import { repoRoot } from '../paths';

/**
 * Module replacements for every Lambda bundle, shared by the stack (NotifyFunction) and the bench so the bench
 * measures what ships. Each replaces SDK code Lambda never runs (other credential sources than the environment,
 * event streams, SigV4a, pure-JS hashes) or a dependency with a smaller equivalent (the LRU); docs/performance.md,
 * "Cold start". The local runtime runs the handlers unbundled with the full SDK.
 */
export const LAMBDA_BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': path.join(repoRoot, 'lambdas/core/bundle-shims/credentials-env.ts'),
  '@smithy/core/event-streams': path.join(repoRoot, 'lambdas/core/bundle-shims/no-event-streams.ts'),
  'mnemonist/lru-cache': path.join(repoRoot, 'lambdas/core/lru-cache.ts'),
  '@aws-sdk/signature-v4-multi-region': path.join(repoRoot, 'lambdas/core/bundle-shims/sigv4-only.ts'),
  '@smithy/core/checksum': path.join(repoRoot, 'lambdas/core/bundle-shims/native-hashes.ts'),
};

/** ESM output has no `require` unless it is created, and some CommonJS dependencies call it. */
export const LAMBDA_BUNDLE_BANNER =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/**
 * What NotifyFunction's bundling settings amount to as esbuild options, for the builds made outside CDK (the
 * cold start bench, tests of what a bundle does): minified ESM for Node 24 with a source map beside it.
 */
export const LAMBDA_ESBUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  mainFields: ['module', 'main'],
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  alias: { ...LAMBDA_BUNDLE_ALIASES },
  banner: { js: LAMBDA_BUNDLE_BANNER },
} as const satisfies BuildOptions;
