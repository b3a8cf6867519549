import { describe, expect, it } from 'vitest';
import { codeOf, importGraph, sourceFiles } from '../support/source-graph';

/**
 * The project's own rules for the code under lambdas/ (docs/design.md, issue 15), checked on the code as
 * esbuild reads it: runtime imports from its metafile, and each file's code without types and comments.
 */
const handlers = sourceFiles('lambdas/handlers');

describe('handlers', () => {
  it.each(handlers)(
    '%s sends through core/sqs-send, loops over no batch and holds no schema',
    async (file) => {
      const imports = (await importGraph()).get(file);
      expect(imports?.packages).not.toContain('@aws-sdk/client-sqs');
      expect(imports?.packages).not.toContain('zod');
      expect(imports?.files).not.toContain('lambdas/core/zod.ts');
      const code = codeOf(file);
      expect(code).not.toMatch(/\.Records\b/);
      expect(code).not.toMatch(/\b(for|while)\s*\(/);
    },
  );

  it.each([
    'lambdas/handlers/workers/ws-welcome.ts',
    'lambdas/handlers/workers/ws-auth-deadline.ts',
    'lambdas/handlers/workers/broadcast-fanout.ts',
  ])('%s is an sqsWorker', async (file) => {
    expect((await importGraph()).get(file)?.files).toContain('lambdas/core/sqs-worker.ts');
  });
});
