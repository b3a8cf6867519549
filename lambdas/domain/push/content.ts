import { linksOf, type NotificationRecord, receiverIdFor } from '../notifications/model';
import type { PushContent } from './provider';
import { pushIdFor } from './records';
import type { DeviceTarget } from './targets';

/**
 * What the push of `notification` to one device carries (docs/push.md, "Mapping"): its content, its link and
 * buttons, and the recipient's feed item (the receiver id the fan-out wrote, derived the same way), so a tap
 * opens the right place and a button press can be reported by the app. `badge`: the unread count, or null.
 */
export const pushContentFor = (
  notification: NotificationRecord,
  device: DeviceTarget,
  badge: number | null,
): PushContent => ({
  push_id: pushIdFor(notification.id, device.token_hash),
  notification_id: notification.id,
  event_type: notification.event_type,
  title: notification.title,
  body: notification.body,
  data: notification.data,
  receiver_id: notification.channels.includes('in_app')
    ? receiverIdFor(notification.id, device.user_id, notification.deliver_at)
    : null,
  ...linksOf(notification),
  priority: notification.priority,
  expires_at: notification.expires_at,
  collapse_key: notification.push?.collapse_key ?? null,
  badge,
  silent: notification.push?.silent ?? false,
});
