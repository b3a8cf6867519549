import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { defaultProvider } from '../../lambdas/core/credentials-env';
import { LAMBDA_BUNDLE_ALIASES } from '../../lib/constructs/bundling';
import { repoRoot } from '../../lib/paths';
import { wiring } from '../../lib/wiring';

/** Every declared function's handler file. */
const handlers = [
  ...new Set(
    [
      ...wiring.httpRoutes,
      ...wiring.webSocketRoutes,
      ...wiring.workers,
      ...(wiring.busFunctions ?? []),
      ...wiring.recurringSchedules,
    ].map((spec) => spec.handler),
  ),
];

/** A client package's aggregate class (`DynamoDB.js`, `SecretsManager.js`: every command of the service). */
const AGGREGATE_CLIENT = /@aws-sdk\/client-[\w-]+\/dist-es\/[A-Z]\w*\.js$/;

/** esbuild as the stack bundles (without minifying or writing), for what each bundle's inputs are. */
const bundleOf = (handlerFiles: readonly string[]) =>
  build({
    entryPoints: handlerFiles.map((handler) => path.join(repoRoot, handler)),
    outdir: path.join(repoRoot, '.bundle-test-out'),
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    mainFields: ['module', 'main'],
    metafile: true,
    logLevel: 'error',
    alias: { ...LAMBDA_BUNDLE_ALIASES },
  });

describe('Lambda bundles', () => {
  it('carry only the environment credential provider, not the default chain (SSO, STS, nested clients)', async () => {
    const { metafile } = await bundleOf(['lambdas/handlers/http/health/live.ts']);
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.some((input) => input.includes('@aws-sdk/client-dynamodb/'))).toBe(true);
    expect(inputs.some((input) => input.includes('@aws-sdk/credential-provider-env/'))).toBe(true);
    expect(inputs.filter((input) => /nested-clients|credential-provider-(node|sso|ini)/.test(input))).toEqual(
      [],
    );
  });

  it('carry no SDK event stream support (no called service has event streams), only a stub that fails loudly', async () => {
    const { metafile } = await bundleOf(['lambdas/handlers/http/notifications/create.ts']);
    const inputs = Object.keys(metafile.inputs);
    // Every client's protocol code `await import()`s it, which bundled it whole (≈ 15 KiB) before the alias.
    expect(inputs.filter((input) => input.includes('@smithy/core/dist-es/submodules/event-streams'))).toEqual(
      [],
    );
    expect(inputs.some((input) => input.endsWith('lambdas/core/no-event-streams.ts'))).toBe(true);
    const stub = await import('../../lambdas/core/no-event-streams');
    expect(() => new stub.EventStreamSerde()).toThrow(/event streams are not bundled/);
    expect(() => stub.eventStreamSerdeProvider()).toThrow(/event streams are not bundled/);
  });

  it('still make and read every SDK call the functions make, bundled with the stub (against a stand-in endpoint)', async () => {
    // The stub stands in for code the SDK loads only for event-stream operations: prove the calls of every client
    // the functions use serialize and deserialize without it, in the bundled form Lambda runs.
    let printed = '';
    const dir = await mkdtemp(path.join(tmpdir(), 'notify-sdk-calls-'));
    try {
      const outfile = path.join(dir, 'sdk-calls.mjs');
      await build({
        entryPoints: [path.join(repoRoot, 'test/support/fixtures/sdk-calls.ts')],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        mainFields: ['module', 'main'],
        logLevel: 'error',
        alias: { ...LAMBDA_BUNDLE_ALIASES },
        banner: {
          js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
        },
      });
      expect(await readFile(outfile, 'utf8')).toContain('event streams are not bundled');
      ({ stdout: printed } = await promisify(execFile)(process.execPath, [outfile], {
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      }));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(printed.trim().split('\n')).toEqual(
      [
        'dynamodb',
        'sqs',
        'eventbridge',
        'scheduler',
        'kms',
        'secrets-manager',
        'apigatewaymanagementapi',
      ].map((name) => `${name} ok`),
    );
  }, 60_000);

  it('carry no SDK aggregate client class, which would bring every command of its service', async () => {
    const { metafile } = await bundleOf(handlers);
    // An `await import()` made esbuild keep a module graph whole (DynamoDB.js, SecretsManager.js: +55 KiB).
    const aggregates = Object.entries(metafile.outputs).flatMap(([output, { inputs }]) =>
      Object.entries(inputs)
        .filter(([input, { bytesInOutput }]) => bytesInOutput > 0 && !input.endsWith('Client.js'))
        .filter(([input]) => AGGREGATE_CLIENT.test(input))
        .map(([input]) => `${path.basename(output)}: ${input}`),
    );
    expect(Object.keys(metafile.outputs).length).toBeGreaterThanOrEqual(handlers.length);
    expect(aggregates).toEqual([]);
    // Bundling all functions takes 20 s or more on a loaded 2-core machine.
  }, 180_000);

  it('carry only the SDK clients their function calls, not those of shared modules it imports', async () => {
    const { metafile } = await bundleOf([
      'lambdas/handlers/http/health/live.ts',
      'lambdas/handlers/http/webhooks/list.ts',
    ]);
    // Each clients-*.ts creates its client in a `lazy(…)` call marked pure, so an unused one is dropped.
    const clientsOf = (handler: string) => {
      const [, output] =
        Object.entries(metafile.outputs).find(([, { entryPoint }]) => entryPoint?.endsWith(handler)) ?? [];
      const packages = Object.entries(output?.inputs ?? {})
        .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
        .map(([input]) => /@aws-sdk\/(client-[\w-]+)\//.exec(input)?.[1])
        .filter((name) => name !== undefined);
      return [...new Set(packages)].sort();
    };
    // DynamoDB for the optional replay store, Secrets Manager for a development stage's HS256 key.
    expect(clientsOf('health/live.ts')).toEqual(['client-dynamodb', 'client-secrets-manager']);
    // Listing webhooks never seals or opens a secret: no KMS.
    expect(clientsOf('webhooks/list.ts')).toEqual(['client-dynamodb', 'client-secrets-manager']);
  });

  it('find the credentials Lambda puts in the environment', async () => {
    const saved = { ...process.env };
    try {
      process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
      process.env.AWS_SECRET_ACCESS_KEY = 'secret';
      process.env.AWS_SESSION_TOKEN = 'session';
      await expect(defaultProvider()()).resolves.toMatchObject({
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'secret',
        sessionToken: 'session',
      });
      delete process.env.AWS_ACCESS_KEY_ID;
      await expect(defaultProvider()()).rejects.toThrow(/AWS_ACCESS_KEY_ID|environment/i);
    } finally {
      process.env = saved;
    }
  });
});
