import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORS_ALLOWED_METHODS, DEFAULT_FUNCTION, type FunctionSpec, wiring } from '../../lib/wiring';

const functions = (): Array<FunctionSpec & { name: string }> => [
  ...wiring.httpRoutes.map((route) => ({ ...route, name: `route ${route.id}` })),
  ...wiring.webSocketRoutes.map((route) => ({ ...route, name: `websocket route ${route.routeKey}` })),
  ...wiring.workers.map((worker) => ({ ...worker, name: `worker ${worker.id}` })),
  ...(wiring.busFunctions ?? []).map((fn) => ({ ...fn, name: `bus function ${fn.id}` })),
  ...wiring.recurringSchedules.map((schedule) => ({ ...schedule, name: `schedule ${schedule.id}` })),
];

const duplicates = (values: readonly string[]) =>
  values.filter((value, index) => values.indexOf(value) !== index);

describe('the wiring declaration', () => {
  it('has unique ids, route keys and method+path pairs', () => {
    expect(duplicates(wiring.httpRoutes.map((route) => route.id))).toEqual([]);
    expect(duplicates(wiring.httpRoutes.map((route) => `${route.method} ${route.path}`))).toEqual([]);
    // A route key is served either by a function or by the gateway itself (a mock route), never both.
    const routeKeys = [...wiring.webSocketRoutes, ...(wiring.webSocketMockRoutes ?? [])].map(
      (route) => route.routeKey,
    );
    expect(duplicates(routeKeys)).toEqual([]);
    expect(duplicates(wiring.tables.map((table) => table.id))).toEqual([]);
    expect(duplicates(wiring.queues.map((queue) => queue.id))).toEqual([]);
    expect(duplicates(wiring.workers.map((worker) => worker.id))).toEqual([]);
    expect(duplicates((wiring.busFunctions ?? []).map((fn) => fn.id))).toEqual([]);
  });

  it('lets browsers use exactly the methods of the declared routes (CORS allow-methods)', () => {
    const used = new Set(wiring.httpRoutes.map((route) => route.method).filter((method) => method !== 'ANY'));
    expect([...CORS_ALLOWED_METHODS].sort()).toEqual([...used].sort());
  });

  it('references only declared tables and queues', () => {
    const tables = new Set(wiring.tables.map((table) => table.id));
    const queues = new Set(wiring.queues.map((queue) => queue.id));
    for (const fn of functions()) {
      for (const table of [...(fn.reads ?? []), ...(fn.writes ?? [])])
        expect(tables, `${fn.name}: ${table}`).toContain(table);
      for (const queue of fn.sendsTo ?? []) expect(queues, `${fn.name}: ${queue}`).toContain(queue);
    }
    for (const worker of wiring.workers) expect(queues, worker.id).toContain(worker.queue);
    const busFunctions = new Set((wiring.busFunctions ?? []).map((fn) => fn.id));
    for (const rule of wiring.busRules) {
      if ('targetQueue' in rule) expect(queues, rule.id).toContain(rule.targetQueue);
      else expect(busFunctions, rule.id).toContain(rule.targetFunction);
    }
    // Lambda's asynchronous invocation settings within what PutFunctionEventInvokeConfig accepts.
    for (const fn of wiring.busFunctions ?? []) {
      expect(fn.maxEventAgeSecs, fn.id).toBeGreaterThanOrEqual(60);
      expect(fn.maxEventAgeSecs, fn.id).toBeLessThanOrEqual(21_600);
      expect([0, 1, 2], fn.id).toContain(fn.retryAttempts);
    }
    for (const target of wiring.scheduleTargets) expect(queues, target.id).toContain(target.targetQueue);
  });

  it('points every function at a handler module that exports `handler`', () => {
    for (const fn of functions()) {
      expect(existsSync(fn.handler), `${fn.name}: ${fn.handler}`).toBe(true);
      expect(readFileSync(fn.handler, 'utf8'), fn.name).toMatch(/export const handler\b/);
    }
  });

  it('lets every HTTP handler build itself from its own declared route', () => {
    for (const route of wiring.httpRoutes) {
      expect(readFileSync(route.handler, 'utf8'), route.id).toMatch(
        new RegExp(`httpRoute\\(\\s*'${route.id}'`),
      );
    }
  });

  it('gives each queue a visibility timeout of at least 6× its worker’s timeout (AWS guidance)', () => {
    for (const worker of wiring.workers) {
      const queue = wiring.queues.find((candidate) => candidate.id === worker.queue);
      const timeout = worker.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs;
      expect(queue?.visibilityTimeoutSecs ?? 0, worker.id).toBeGreaterThanOrEqual(6 * timeout);
    }
  });

  it('keeps worker batches within the SQS event source limits', () => {
    for (const worker of wiring.workers) {
      expect(worker.batchSize).toBeGreaterThanOrEqual(1);
      expect(worker.batchSize).toBeLessThanOrEqual(worker.maxBatchingWindowSecs > 0 ? 10_000 : 10);
      expect(worker.maxBatchingWindowSecs).toBeLessThanOrEqual(300);
    }
  });
});
