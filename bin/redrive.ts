/**
 * `npm run redrive`: hands the events of a bus function's dead-letter queue back to the function that failed
 * them, as EventBridge hands them (Lambda Invoke, InvocationType Event; docs/operations.md, "Dead letters of the
 * bus functions").
 *
 *   npm run redrive -- --queue-url URL [--function NAME|ARN]   a deployed stage, with the environment's
 *                                                             credentials and region (AWS_PROFILE, AWS_REGION, …)
 *   npm run redrive -- --data DIR --queue NAME [--function …]  the local runtime started with `npm start -- --data DIR`
 */
import '../local/sdk-env';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { redriveDeadLetters } from '../lib/ops/redrive';
import { fail, parseCliArgs } from '../local/cli/args';
import { LAMBDA_STATE_FILE, type LambdaState } from '../local/lambda/local-lambda';
import { SQS_STATE_FILE, type SqsState } from '../local/sqs/local-sqs';
import { readStandInState, StandInNotRunning } from '../local/stand-in-state';

const USAGE = 'npm run redrive -- --queue-url URL | --data DIR --queue NAME  [--function NAME|ARN]';
const args = parseCliArgs(
  {
    'queue-url': { type: 'string' },
    data: { type: 'string' },
    queue: { type: 'string' },
    function: { type: 'string' },
    bus: { type: 'string' },
  },
  USAGE,
  'URL / NAME: the DLQ (busFunctions-dlq). Each event (from Lambda’s invocation record, or\n' +
    'EventBridge’s dead letter) is invoked again, asynchronously, on the function that failed it (the record’s\n' +
    'functionArn, the dead letter’s TARGET_ARN), and its message deleted once Lambda accepted it. --function: the\n' +
    'function for messages that name none. What cannot be redriven is left in the queue and listed (exit code 2).\n' +
    'Needs sqs:ReceiveMessage and sqs:DeleteMessage on the DLQ and lambda:InvokeFunction on the function.',
);

if (typeof args.bus === 'string') {
  process.stderr.write(
    'redrive: --bus is no longer used (events go back to their function, not to the bus) and is ignored\n',
  );
}

const clientsFor = (): { sqs: SQSClient; lambda: LambdaClient; queueUrl: string } => {
  if (typeof args.data === 'string') {
    if (typeof args.queue !== 'string') return fail(`--queue NAME is required with --data\nusage: ${USAGE}`);
    let sqsState: SqsState;
    let lambdaState: LambdaState;
    try {
      sqsState = readStandInState<SqsState>(args.data, [SQS_STATE_FILE]);
      lambdaState = readStandInState<LambdaState>(args.data, [LAMBDA_STATE_FILE]);
    } catch (error) {
      if (error instanceof StandInNotRunning) return fail(error.message);
      throw error;
    }
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    return {
      sqs: new SQSClient({ endpoint: sqsState.endpoint, region: sqsState.region, credentials }),
      lambda: new LambdaClient({ endpoint: lambdaState.endpoint, region: lambdaState.region, credentials }),
      queueUrl: `${sqsState.endpoint}/${sqsState.accountId}/${args.queue}`,
    };
  }
  if (typeof args['queue-url'] !== 'string') {
    return fail(`--queue-url (or --data and --queue) is required\nusage: ${USAGE}`);
  }
  // A hung connection would stall the run while the received batch's hold runs out (another run could then take
  // the same messages): every call gives up after 30 s, and its error ends the run.
  const requestHandler = { connectionTimeout: 5_000, requestTimeout: 30_000 };
  return {
    sqs: new SQSClient({ requestHandler }),
    lambda: new LambdaClient({ requestHandler }),
    queueUrl: args['queue-url'],
  };
};

const { sqs, lambda, queueUrl } = clientsFor();
try {
  const summary = await redriveDeadLetters({
    sqs,
    lambda,
    queueUrl,
    ...(typeof args.function === 'string' ? { functionName: args.function } : {}),
  });
  process.stdout.write(`redrive: ${summary.reinvoked} event(s) invoked again on their function\n`);
  for (const { messageId, reason } of summary.left) process.stdout.write(`left ${messageId}: ${reason}\n`);
  if (summary.left.length > 0) process.exitCode = 2;
} catch (error) {
  fail(`redrive failed: ${(error as Error).name}: ${(error as Error).message}`);
} finally {
  sqs.destroy();
  lambda.destroy();
}
