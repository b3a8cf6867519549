/**
 * `npm run redrive`: puts the events of a bus function's dead-letter queue back on the bus (docs/operations.md,
 * "Dead letters of the bus functions").
 *
 *   npm run redrive -- --queue-url URL --bus NAME     a deployed stage, with the environment's credentials and
 *                                                    region (AWS_PROFILE, AWS_REGION, …)
 *   npm run redrive -- --data DIR --queue NAME        the local runtime started with `npm start -- --data DIR`
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import { redriveDeadLetters } from '../lib/ops/redrive';
import { fail, parseCliArgs } from '../local/cli/args';
import { findEventBridgeState, ReplayTargetNotFound } from '../local/eventbridge/replay-client';
import { SQS_STATE_FILE, type SqsState } from '../local/sqs/local-sqs';

const USAGE = 'npm run redrive -- --queue-url URL --bus NAME | --data DIR --queue NAME';
const args = parseCliArgs(
  {
    'queue-url': { type: 'string' },
    bus: { type: 'string' },
    data: { type: 'string' },
    queue: { type: 'string' },
  },
  USAGE,
  'URL / NAME: the DLQ (eventFrames-dlq, webhookEvents-dlq); --bus: the stack output EventBusName.\n' +
    'Each event (from Lambda’s invocation record, or EventBridge’s dead letter) is put on the bus again and its\n' +
    'message deleted; a message holding no event is left in the queue and listed (exit code 2).',
);

const clientsFor = (): {
  sqs: SQSClient;
  eventBridge: EventBridgeClient;
  queueUrl: string;
  busName: string;
} => {
  if (typeof args.data === 'string') {
    if (typeof args.queue !== 'string') return fail(`--queue NAME is required with --data\nusage: ${USAGE}`);
    const stateFile = join(args.data, SQS_STATE_FILE);
    if (!existsSync(stateFile)) {
      return fail(
        `no running runtime uses ${args.data}: start it with \`npm start -- --data ${args.data}\` first`,
      );
    }
    const sqsState = JSON.parse(readFileSync(stateFile, 'utf8')) as SqsState;
    let bus: ReturnType<typeof findEventBridgeState>;
    try {
      bus = findEventBridgeState(args.data);
    } catch (error) {
      if (error instanceof ReplayTargetNotFound) return fail(error.message);
      throw error;
    }
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    return {
      sqs: new SQSClient({ endpoint: sqsState.endpoint, region: sqsState.region, credentials }),
      eventBridge: new EventBridgeClient({ endpoint: bus.endpoint, region: bus.region, credentials }),
      queueUrl: `${sqsState.endpoint}/${sqsState.accountId}/${args.queue}`,
      busName: bus.busName,
    };
  }
  if (typeof args['queue-url'] !== 'string' || typeof args.bus !== 'string') {
    return fail(`--queue-url and --bus (or --data and --queue) are required\nusage: ${USAGE}`);
  }
  return {
    sqs: new SQSClient({}),
    eventBridge: new EventBridgeClient({}),
    queueUrl: args['queue-url'],
    busName: args.bus,
  };
};

const { sqs, eventBridge, queueUrl, busName } = clientsFor();
try {
  const summary = await redriveDeadLetters({ sqs, eventBridge, queueUrl, busName });
  process.stdout.write(`redrive: ${summary.republished} event(s) put on ${busName} again\n`);
  for (const { messageId, reason } of summary.left) process.stdout.write(`left ${messageId}: ${reason}\n`);
  if (summary.left.length > 0) process.exitCode = 2;
} catch (error) {
  fail(`redrive failed: ${(error as Error).name}: ${(error as Error).message}`);
} finally {
  sqs.destroy();
  eventBridge.destroy();
}
