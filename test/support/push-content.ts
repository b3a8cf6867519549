import type { PushContent } from '../../lambdas/domain/push/provider';

/** A provider-neutral push as the pipeline hands it to a sender: a visible, normal-priority comment push. */
export const pushContent = (overrides: Partial<PushContent> = {}): PushContent => ({
  push_id: '0b0f9d4e-7d55-4b43-9d5f-0d5a3c1f6a10',
  notification_id: 'n-1',
  event_type: 'comment.created',
  title: 'New comment',
  body: 'Alice replied',
  data: { post: 42 },
  priority: 'normal',
  expires_at: null,
  collapse_key: null,
  badge: null,
  silent: false,
  ...overrides,
});
