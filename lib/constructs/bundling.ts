import path from 'node:path';
import type { BuildOptions } from 'esbuild';
import { repoRoot } from '../paths';

/**
 * Module replacements for every Lambda bundle, shared by the stack (NotifyFunction) and the cold start bench so
 * the bench measures what ships: the SDK's default credential chain becomes the environment provider alone
 * (lambdas/core/credentials-env.ts), the event stream support no called service needs becomes a stub that
 * throws (lambdas/core/no-event-streams.ts), the LRU of the DynamoDB client's endpoint cache becomes a small
 * one on a `Map` (lambdas/core/lru-cache.ts), and EventBridge's multi-region signer, whose SigV4a half has no
 * implementation installed, becomes SigV4 alone (lambdas/core/sigv4-only.ts), and the SDK's hashes become the
 * same classes on node:crypto without their pure-JS fallbacks (lambdas/core/native-hashes.ts). The local runtime runs the handlers unbundled with the full SDK,
 * which finds the same environment variables first.
 */
export const LAMBDA_BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': path.join(repoRoot, 'lambdas/core/credentials-env.ts'),
  '@smithy/core/event-streams': path.join(repoRoot, 'lambdas/core/no-event-streams.ts'),
  'mnemonist/lru-cache': path.join(repoRoot, 'lambdas/core/lru-cache.ts'),
  '@aws-sdk/signature-v4-multi-region': path.join(repoRoot, 'lambdas/core/sigv4-only.ts'),
  '@smithy/core/checksum': path.join(repoRoot, 'lambdas/core/native-hashes.ts'),
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
