/**
 * `npm run replay`: replays archived bus events of a running local runtime to the bus's rules.
 *
 *   npm run replay -- --data DIR [--from ISO-8601] [--to ISO-8601] [--name NAME]
 *
 * The runtime must run with the same `--data DIR` (or NOTIFY_DATA_DIR): its EventBridge stand-in writes its
 * endpoint to DIR/eventbridge/eventbridge-endpoint.json, and this command calls StartReplay there. Events whose
 * `time` lies in [from, to] (default: everything archived so far) are delivered again with `replay-name` set.
 */
import '../sdk-env';
import { findEventBridgeState, requestReplay } from '../eventbridge/replay-client';
import { StandInNotRunning } from '../stand-in-state';
import { fail, parseCliArgs } from './args';

const USAGE = 'npm run replay -- --data DIR [--from ISO-8601] [--to ISO-8601] [--name NAME]';

const args = parseCliArgs(
  { data: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, name: { type: 'string' } },
  USAGE,
);
const dataDir = (args.data as string | undefined) ?? (process.env.NOTIFY_DATA_DIR || undefined);
if (!dataDir) {
  fail(`--data DIR is required: replay needs a runtime started with --data DIR\nusage: ${USAGE}`);
}
const parseTime = (flag: string, value: string | undefined): Date | undefined => {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) fail(`--${flag} must be an ISO-8601 time, got ${value}`);
  return date;
};
const from = parseTime('from', args.from as string | undefined);
const to = parseTime('to', args.to as string | undefined);
const name = args.name as string | undefined;

try {
  const state = findEventBridgeState(dataDir as string);
  const summary = await requestReplay({
    state,
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(name ? { name } : {}),
  });
  process.stdout.write(`replay ${summary}\n`);
} catch (error) {
  if (error instanceof StandInNotRunning) fail(error.message);
  fail(`replay failed: ${(error as Error).name}: ${(error as Error).message}`);
}
