import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../core/clients';
import { nowSecs, SESSION_META, table } from './tables';

/** A session's `meta` item: its user, current connection, and, once that connection ended, what to restore. */
export interface SessionMeta {
  readonly session_id: string;
  readonly user_id: string;
  readonly connection_id: string;
  /** Set while the session has no connection (epoch milliseconds). */
  readonly ended_at?: number;
  readonly channels?: string[];
  readonly rooms?: string[];
  /**
   * The oldest buffered frame a resume read when more were kept than it replays: that one and everything older
   * were dropped, and a later resume reads only newer keys (lambdas/domain/realtime/sessions.ts).
   */
  readonly replay_floor?: string;
  readonly ttl: number;
}

export const readSessionMeta = async (sessionId: string): Promise<SessionMeta | undefined> => {
  const result = await documentClient().send(
    new GetCommand({
      TableName: table('sessions'),
      Key: { session_id: sessionId, item: SESSION_META },
      ConsistentRead: true,
    }),
  );
  const meta = result.Item as SessionMeta | undefined;
  return meta && meta.ttl > nowSecs() ? meta : undefined;
};
