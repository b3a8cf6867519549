import { newId } from '../../lambdas/core/ids';
import type { NotificationRecord } from '../../lambdas/domain/notifications/model';

/** A stored notification as `POST /notifications` writes it, sent a minute ago, for domain tests that deliver it. */
export const notificationRecord = (overrides: Partial<NotificationRecord> = {}): NotificationRecord => ({
  id: newId(),
  source: 'test',
  event_type: 'social.comment',
  title: 'New comment',
  body: '',
  data: {},
  priority: 'normal',
  channels: ['in_app', 'push'],
  scheduled_at: null,
  expires_at: null,
  created_at: new Date().toISOString(),
  deliver_at: Date.now() - 60_000,
  status: 'accepted',
  created_by: 'service:test',
  ttl: Math.ceil(Date.now() / 1000) + 3600,
  ...overrides,
});
