import { WEBSOCKET_FRAME_MAX_BYTES } from '../../../common/limits';
import { validationError } from '../../core/errors';
import { frameFor } from './delivery';
import { type NotificationRecord, receiverIdFor } from './model';

/*
 * A `notification` frame fits one API Gateway WebSocket frame (32 KiB) by design (docs/notifications.md, "Frame
 * size"): the create refuses a notification whose frame would not fit, naming its bulkiest field, and a digest is
 * built to fit. The frame a session replays is the same frame; `notification.state` and `notification.bulk` frames
 * carry states and ids only.
 */

/** The fields a sender can shorten, the ones a 400 may name. */
const BULKY_FIELDS = ['data', 'body', 'actions', 'url', 'title'] as const;

/**
 * The bytes of the largest `notification` frame `notification` makes: every frame of it has the same fields but
 * the receiver id (always 36 characters) and `channel` (`realtime`, the longer name, counted).
 */
export const notificationFrameBytes = (notification: NotificationRecord): number =>
  Buffer.byteLength(
    JSON.stringify(
      frameFor(notification, receiverIdFor(notification.id, '', notification.deliver_at), ['realtime']),
    ),
    'utf8',
  );

const sendsFrames = (notification: NotificationRecord): boolean =>
  notification.channels.includes('toast') || notification.channels.includes('realtime');

/** Whether the notification's frames (when it sends any) fit one WebSocket frame. */
export const frameFits = (notification: NotificationRecord): boolean =>
  !sendsFrames(notification) || notificationFrameBytes(notification) <= WEBSOCKET_FRAME_MAX_BYTES;

/**
 * Throws a 400 `validation` naming the bulkiest of `data`, `body`, `actions`, `url` and `title` when the
 * notification sends frames (`toast`, `realtime`) and its frame would be over the 32 KiB frame limit: each field
 * within its own limit, their sum can pass it.
 */
export const checkFrameFits = (notification: NotificationRecord): void => {
  if (frameFits(notification)) return;
  const bytes = notificationFrameBytes(notification);
  const frame = frameFor(notification, '', ['realtime']);
  const sizeOf = (field: (typeof BULKY_FIELDS)[number]) =>
    Buffer.byteLength(JSON.stringify(frame[field]), 'utf8');
  const bulkiest = BULKY_FIELDS.reduce((largest, field) =>
    sizeOf(field) > sizeOf(largest) ? field : largest,
  );
  throw validationError(
    `The notification's WebSocket frame would be ${bytes} bytes, over the ${WEBSOCKET_FRAME_MAX_BYTES}-byte frame limit`,
    [
      {
        field: bulkiest,
        issue: `together, title, body, data, url and actions must fit a ${WEBSOCKET_FRAME_MAX_BYTES}-byte frame: shorten this one by at least ${bytes - WEBSOCKET_FRAME_MAX_BYTES} bytes`,
      },
    ],
  );
};
