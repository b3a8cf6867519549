import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventBridgeClient, StartReplayCommand } from '@aws-sdk/client-eventbridge';
import { type EventBridgeState, STATE_FILE } from './local-eventbridge';

/**
 * What `npm run replay` does: find the running runtime's EventBridge stand-in through the state file it
 * writes in its data folder, and ask it to replay its archive with the real StartReplay operation.
 */

export class ReplayTargetNotFound extends Error {}

/** The runtime puts each stand-in's data in a subfolder; a LocalEventBridge started alone uses the folder itself. */
export const findEventBridgeState = (dataDir: string): EventBridgeState => {
  const candidates = [join(dataDir, 'eventbridge', STATE_FILE), join(dataDir, STATE_FILE)];
  const file = candidates.find((candidate) => existsSync(candidate));
  if (!file) {
    throw new ReplayTargetNotFound(
      `no running runtime uses ${dataDir}: start it with \`npm start -- --data ${dataDir}\` first`,
    );
  }
  const state = JSON.parse(readFileSync(file, 'utf8')) as EventBridgeState;
  try {
    process.kill(state.pid, 0);
  } catch (error) {
    // EPERM: alive but someone else's; ESRCH: the runtime died without cleaning up.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') {
      throw new ReplayTargetNotFound(
        `the runtime that used ${dataDir} (pid ${state.pid}) is no longer running`,
      );
    }
  }
  return state;
};

export interface ReplayRequest {
  readonly state: Pick<EventBridgeState, 'endpoint' | 'busArn' | 'archiveArn' | 'region'>;
  readonly from?: Date;
  readonly to?: Date;
  readonly name?: string;
}

export const requestReplay = async (request: ReplayRequest): Promise<string> => {
  const client = new EventBridgeClient({
    endpoint: request.state.endpoint,
    region: request.state.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  try {
    const name =
      request.name ??
      `replay-${new Date()
        .toISOString()
        .replace(/[^0-9]/g, '')
        .slice(0, 14)}`;
    const result = await client.send(
      new StartReplayCommand({
        ReplayName: name,
        EventSourceArn: request.state.archiveArn,
        Destination: { Arn: request.state.busArn },
        EventStartTime: request.from ?? new Date(0),
        EventEndTime: request.to ?? new Date(),
      }),
    );
    return `${name}: ${result.State ?? 'UNKNOWN'}${result.StateReason ? ` (${result.StateReason})` : ''}`;
  } finally {
    client.destroy();
  }
};
