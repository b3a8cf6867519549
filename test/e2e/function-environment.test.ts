/**
 * Each function runs locally with the environment its declaration gives it, computed by the same code as the
 * CDK stack's (lib/wiring/function-env.ts): a function that does not declare a table cannot name it locally,
 * as it could not on AWS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envNames, type HttpRoute, type Wiring } from '../../lib/wiring';
import { type Runtime, startTestRuntime } from '../support/runtime';

const SEND_TO = 'test/support/fixtures/handlers/send-to.ts';

const route = (id: string, path: string, extra: Partial<HttpRoute> = {}): HttpRoute => ({
  id,
  method: 'GET',
  path,
  handler: 'test/support/fixtures/handlers/env-report.ts',
  access: { public: true },
  ...extra,
});

const wiring: Wiring = {
  httpRoutes: [
    route('env.declared', '/declared', { reads: ['things'] }),
    route('env.undeclared', '/undeclared'),
    route('send.granted', '/send/granted', { sendsTo: ['jobs'], handler: SEND_TO }),
    // The deliberate wrong grant: this function sends to `jobs` without declaring it.
    route('send.ungranted', '/send/ungranted', { handler: SEND_TO }),
  ],
  webSocketRoutes: [],
  tables: [{ id: 'things', partitionKey: { name: 'pk', type: 'S' }, purpose: 'fixture' }],
  queues: [{ id: 'jobs', maxReceiveCount: 3, visibilityTimeoutSecs: 60, purpose: 'fixture' }],
  workers: [],
  busRules: [],
  recurringSchedules: [],
  scheduleTargets: [],
};

describe('per-function environment', () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await startTestRuntime({ wiring });
  }, 120_000);
  afterAll(() => runtime?.stop());

  const report = async (path: string) => {
    const response = await fetch(`${runtime.httpUrl}${path}`);
    expect(response.status).toBe(200);
    return (await response.json()) as { names: string[]; thingsTable: string | null };
  };

  it('gives a function the variables of the resources it declares', async () => {
    const declared = await report('/declared');
    expect(declared.thingsTable).toBe(runtime.env[envNames.tableName('things')]);
    expect(declared.names).toContain(envNames.tableName('things'));
    expect(declared.names).toContain(envNames.stage);
  });

  it('gives a function nothing it does not declare, though the runtime has it', async () => {
    const undeclared = await report('/undeclared');
    expect(undeclared.thingsTable).toBeNull();
    expect(undeclared.names).not.toContain(envNames.tableName('things'));
    expect(undeclared.names).not.toContain(envNames.queueUrl('jobs'));
    expect(undeclared.names).not.toContain(envNames.busName);
    expect(undeclared.names).not.toContain(envNames.cursorKey);
    // Outside invocations (this test) the runtime's variables are all there.
    expect(process.env[envNames.tableName('things')]).toBe(runtime.env[envNames.tableName('things')]);
    expect(process.env[envNames.queueUrl('jobs')]).toBeDefined();
  });

  it('refuses a send the function is not granted with AccessDeniedException, and allows a granted one', async () => {
    const queue = encodeURIComponent(runtime.env[envNames.queueUrl('jobs')] ?? '');
    const send = async (path: string) =>
      (await (await fetch(`${runtime.httpUrl}${path}?queue=${queue}`)).json()) as {
        sent: boolean;
        name?: string;
        message?: string;
      };
    expect(await send('/send/granted')).toEqual({ sent: true });
    const refused = await send('/send/ungranted');
    expect(refused.sent).toBe(false);
    expect(refused.name).toBe('AccessDeniedException');
    expect(refused.message).toMatch(
      /is not authorized to perform: sqs:sendmessage on resource: arn:aws:sqs:.*:jobs/,
    );
    expect(runtime.standIns.sqs.stats('jobs').ApproximateNumberOfMessages).toBe(1);
  });

  it('refuses PutEvents and Scheduler calls from a function that does not declare them', async () => {
    const call = async (query: string) =>
      (await (await fetch(`${runtime.httpUrl}/send/ungranted?${query}`)).json()) as {
        sent: boolean;
        name?: string;
      };
    const putEvents = await call('bus=notify-local');
    expect(putEvents).toMatchObject({ sent: false, name: 'AccessDeniedException' });
    const getSchedule = await call('schedule=anything');
    expect(getSchedule).toMatchObject({ sent: false, name: 'AccessDeniedException' });
  });
});
