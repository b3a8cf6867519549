/**
 * `npm run redrive`: puts the events of a bus function's dead-letter queue back on the bus (docs/operations.md,
 * "Dead letters of the bus functions"), with the credentials and region of the environment (AWS_PROFILE,
 * AWS_REGION, …; AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL_EVENTBRIDGE point it at other endpoints).
 *
 *   npm run redrive -- --queue-url URL --bus NAME
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import { redriveDeadLetters } from '../lib/ops/redrive';
import { fail, parseCliArgs } from '../local/cli/args';

const USAGE = 'npm run redrive -- --queue-url URL --bus NAME';
const args = parseCliArgs(
  { 'queue-url': { type: 'string' }, bus: { type: 'string' } },
  USAGE,
  'URL: the DLQ (eventFrames-dlq, webhookEvents-dlq); NAME: the stack output EventBusName.\n' +
    'Each event (from Lambda’s invocation record, or EventBridge’s dead letter) is put on the bus again and its\n' +
    'message deleted; a message holding no event is left in the queue and listed.',
);
const queueUrl = args['queue-url'];
const busName = args.bus;
if (typeof queueUrl !== 'string' || typeof busName !== 'string')
  fail(`--queue-url and --bus are required\nusage: ${USAGE}`);

const sqs = new SQSClient({});
const eventBridge = new EventBridgeClient({});
try {
  const summary = await redriveDeadLetters({
    sqs,
    eventBridge,
    queueUrl: queueUrl as string,
    busName: busName as string,
  });
  process.stdout.write(`redrive: ${summary.republished} event(s) put on ${busName as string} again\n`);
  for (const { messageId, reason } of summary.left) process.stdout.write(`left ${messageId}: ${reason}\n`);
  if (summary.left.length > 0) process.exitCode = 2;
} catch (error) {
  fail(`redrive failed: ${(error as Error).name}: ${(error as Error).message}`);
} finally {
  sqs.destroy();
  eventBridge.destroy();
}
