import { join } from 'node:path';
import { EventBridgeClient, StartReplayCommand } from '@aws-sdk/client-eventbridge';
import { readStandInState } from '../stand-in-state';
import { type EventBridgeState, STATE_FILE } from './local-eventbridge';

/**
 * What `npm run replay` does: find the running runtime's EventBridge stand-in through the state file it
 * writes in its data folder, and ask it to replay its archive with the real StartReplay operation.
 */

/** The runtime puts each stand-in's data in a subfolder; a LocalEventBridge started alone uses the folder itself. */
export const findEventBridgeState = (dataDir: string): EventBridgeState =>
  readStandInState<EventBridgeState>(dataDir, [join('eventbridge', STATE_FILE), STATE_FILE]);

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
