import { z } from 'zod';
import { TOPIC_NAME } from './names';

export { TOPIC_NAME };
export const MAX_DESCRIPTION_LENGTH = 1024;

export const topicNameSchema = z.string().regex(TOPIC_NAME, 'must match ^[a-z0-9][a-z0-9._-]{0,127}$');

export const createTopicSchema = z.strictObject({
  name: topicNameSchema,
  description: z.string().max(MAX_DESCRIPTION_LENGTH).optional(),
});

export const createSubscriptionSchema = z.strictObject({
  topic: topicNameSchema,
  user_id: z.string().min(1).max(256).optional(),
});

export type CreateTopicInput = z.output<typeof createTopicSchema>;
export type CreateSubscriptionInput = z.output<typeof createSubscriptionSchema>;
