import { queueUrl } from '../../core/clients';
import { sendAll } from '../../core/sqs-send';
import { postFrame } from './deliver';
import { claimWelcome, getConnection, sessionFrameOf } from './lifecycle';

/** `$connect` cannot post to its own connection on AWS: the `session` frame is sent by the welcome worker. */
export const requestWelcome = (connectionId: string): Promise<void> =>
  sendAll(queueUrl('wsWelcome'), [JSON.stringify({ connection_id: connectionId })]);

/** Sends the `session` frame of a connection authenticated at `$connect` (once, whoever claims it first). */
export const sendWelcome = async (connectionId: string): Promise<void> => {
  const connection = await getConnection(connectionId);
  if (!connection?.session_id || !connection.user_id || connection.welcomed) return;
  if (!(await claimWelcome(connectionId))) return;
  await postFrame(
    connectionId,
    sessionFrameOf({ session_id: connection.session_id, user_id: connection.user_id }),
  );
};
