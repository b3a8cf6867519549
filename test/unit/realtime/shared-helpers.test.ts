import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const source = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

/** Issue 15, item 5: the realtime handlers stay thin and use the one sender and the one worker wrapper. */
describe('realtime handlers', () => {
  it.each([
    'lambdas/handlers/ws/connect.ts',
    'lambdas/handlers/workers/ws-welcome.ts',
    'lambdas/handlers/workers/ws-auth-deadline.ts',
    'lambdas/handlers/workers/broadcast-fanout.ts',
    'lambdas/handlers/http/broadcast/send.ts',
  ])('%s sends through lambdas/core/sqs-send.ts and loops over no batch itself', (path) => {
    const text = source(path);
    expect(text).not.toContain('@aws-sdk/client-sqs');
    expect(text).not.toMatch(/\.Records\b/);
    expect(text).not.toMatch(/for \(let start = 0/);
  });

  it.each([
    'lambdas/handlers/workers/ws-welcome.ts',
    'lambdas/handlers/workers/ws-auth-deadline.ts',
    'lambdas/handlers/workers/broadcast-fanout.ts',
  ])('%s is an sqsWorker', (path) => {
    expect(source(path)).toContain("from '../../core/sqs-worker'");
  });
});
