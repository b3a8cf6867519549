import { pageLimit } from '../../core/page-limit';
import * as z from '../../core/zod';
import { TOPIC_NAME } from './names';

/** Topics a page of GET /topics lists at most. */
export const MAX_TOPICS_PAGE = 100;

export const MAX_DESCRIPTION_LENGTH = 1024;

export const topicNameSchema = z
  .string()
  .check(z.regex(TOPIC_NAME, 'must match ^[a-z0-9][a-z0-9._-]{0,127}$'));

export const createTopicSchema = z.strictObject({
  name: topicNameSchema,
  description: z.optional(z.nullable(z.string().check(z.maxLength(MAX_DESCRIPTION_LENGTH)))),
});

export const createSubscriptionSchema = z.strictObject({
  topic: topicNameSchema,
  user_id: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
});

/** The cursor is the last topic name of the previous page. */
export const listTopicsQuerySchema = z.strictObject({
  limit: pageLimit(MAX_TOPICS_PAGE, 50),
  cursor: z.optional(topicNameSchema),
});

export type ListTopicsQuery = z.output<typeof listTopicsQuerySchema>;
export type CreateTopicInput = z.output<typeof createTopicSchema>;
export type CreateSubscriptionInput = z.output<typeof createSubscriptionSchema>;
