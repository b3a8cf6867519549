import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { defaultProvider } from '../../lambdas/core/credentials-env';
import { LAMBDA_BUNDLE_ALIASES } from '../../lib/constructs/bundling';
import { repoRoot } from '../../lib/paths';

describe('Lambda bundles', () => {
  it('carry only the environment credential provider, not the default chain (SSO, STS, nested clients)', async () => {
    const { metafile } = await build({
      entryPoints: [path.join(repoRoot, 'lambdas/handlers/http/health/live.ts')],
      bundle: true,
      write: false,
      platform: 'node',
      format: 'esm',
      mainFields: ['module', 'main'],
      metafile: true,
      logLevel: 'error',
      alias: { ...LAMBDA_BUNDLE_ALIASES },
    });
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.some((input) => input.includes('@aws-sdk/client-dynamodb/'))).toBe(true);
    expect(inputs.some((input) => input.includes('@aws-sdk/credential-provider-env/'))).toBe(true);
    expect(inputs.filter((input) => /nested-clients|credential-provider-(node|sso|ini)/.test(input))).toEqual(
      [],
    );
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
