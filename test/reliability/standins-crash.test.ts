import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/lambda/runner';
import { waitUntil } from '../support/await';
import { CRASH_BUS, startCrashStandIns } from '../support/fixtures/standins-process';

/**
 * A 202 means the work is on disk: the stand-ins answer SendMessage, PutEvents and CreateSchedule only after
 * an fsync'd write, so a SIGKILL right after the answer loses nothing. The stand-ins run in a child process
 * that is killed the moment the last answer arrives; fresh stand-ins on the same data folder must find it all.
 */
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const children: ChildProcess[] = [];
const dirs: string[] = [];
const stoppers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const stop of stoppers.splice(0).reverse()) await stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Endpoints {
  readonly sqs: string;
  readonly jobsUrl: string;
  readonly laterArn: string;
  readonly eventBridge: string;
  readonly scheduler: string;
}

const startChild = async (dataDir: string) => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/fixtures/standins-process.ts', dataDir],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  const endpoints = await new Promise<Endpoints>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((text) => text.startsWith('{'));
      if (line && output.includes('\n')) resolve(JSON.parse(line) as Endpoints);
    });
    child.once('exit', (code) => reject(new Error(`stand-ins exited with ${code}`)));
  });
  const killed = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    endpoints,
    kill: async () => {
      child.kill('SIGKILL');
      await killed;
    },
  };
};

/** Fresh in-process stand-ins on the same folder, as a restart would bring up. */
const restart = async (dataDir: string) => {
  const { sqs, eventBridge, stop } = await startCrashStandIns(dataDir, () => {});
  stoppers.push(stop);
  const queued = (queueId: string) => {
    const stats = sqs.stats(queueId);
    return stats.ApproximateNumberOfMessages + stats.ApproximateNumberOfMessagesDelayed;
  };
  return { eventBridge, queued };
};

describe('stand-ins killed right after they answer', () => {
  it('keep every SendMessage, SendMessageBatch, PutEvents and CreateSchedule they answered', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'standins-crash-'));
    dirs.push(dataDir);
    const { endpoints, kill } = await startChild(dataDir);
    const sqs = new SQSClient({ endpoint: endpoints.sqs, region: 'us-east-1', credentials });
    const events = new EventBridgeClient({
      endpoint: endpoints.eventBridge,
      region: 'us-east-1',
      credentials,
    });
    const scheduler = new SchedulerClient({
      endpoint: endpoints.scheduler,
      region: 'us-east-1',
      credentials,
    });

    const fireAt = new Date(Date.now() + 3000).toISOString().slice(0, 19);
    // Everything in parallel, the kill as soon as the last answer is in: no time for a lazy save.
    await Promise.all([
      ...Array.from({ length: 20 }, (_, index) =>
        sqs.send(new SendMessageCommand({ QueueUrl: endpoints.jobsUrl, MessageBody: `single ${index}` })),
      ),
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: endpoints.jobsUrl,
          Entries: Array.from({ length: 10 }, (_, index) => ({
            Id: `e${index}`,
            MessageBody: `batch ${index}`,
          })),
        }),
      ),
      ...Array.from({ length: 5 }, (_, index) =>
        events.send(
          new PutEventsCommand({
            Entries: [
              { EventBusName: CRASH_BUS, Source: 'crash', DetailType: 'test', Detail: `{"n":${index}}` },
            ],
          }),
        ),
      ),
      scheduler.send(
        new CreateScheduleCommand({
          Name: 'kept',
          ScheduleExpression: `at(${fireAt})`,
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: {
            Arn: endpoints.laterArn,
            RoleArn: 'arn:aws:iam::000000000000:role/scheduler',
            Input: 'later',
          },
        }),
      ),
    ]);
    await kill();
    for (const client of [sqs, events, scheduler]) client.destroy();

    const restarted = await restart(dataDir);
    expect(restarted.queued('jobs')).toBe(30);
    expect(restarted.queued('events')).toBe(5);
    expect(restarted.eventBridge.archivedEvents()).toHaveLength(5);
    // The schedule survived and fires after the restart.
    await waitUntil(() => restarted.queued('later') === 1, 50);
  });
});
