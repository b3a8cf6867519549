import type { PushContent } from '../../lambdas/domain/push/provider';

/** One push's content as the pipeline hands it to a provider, with a fresh `push_id`; `overrides` change fields. */
export const pushContent = (overrides: Partial<PushContent> = {}): PushContent => ({
  push_id: crypto.randomUUID(),
  notification_id: 'n-1',
  event_type: 'comment.created',
  title: 'New comment',
  body: 'Alice replied to your post',
  data: { post: 42, url: '/posts/42' },
  receiver_id: null,
  url: null,
  actions: [],
  priority: 'normal',
  expires_at: null,
  collapse_key: null,
  badge: null,
  silent: false,
  ...overrides,
});
