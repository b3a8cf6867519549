import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../../core/logger';
import { postFrame } from '../../domain/realtime/deliver';
import { claimWelcome, getConnection, sessionFrameOf } from '../../domain/realtime/lifecycle';

/** Sends the `session` frame of a connection authenticated at `$connect` (once, whoever claims it first). */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const batchItemFailures: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    try {
      const { connection_id: connectionId } = JSON.parse(record.body) as { connection_id: string };
      const connection = await getConnection(connectionId);
      if (!connection?.session_id || !connection.user_id || connection.welcomed) continue;
      if (!(await claimWelcome(connectionId))) continue;
      await postFrame(
        connectionId,
        sessionFrameOf({ session_id: connection.session_id, user_id: connection.user_id }),
      );
    } catch (error) {
      logger.error('welcome failed', { error: error as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
};
