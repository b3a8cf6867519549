import { identifierSchema } from '../../core/identifier-schema';
import { pageLimit } from '../../core/page-limit';
import { NAMED_USER_RULE } from '../../core/principal';
import * as z from '../../core/zod';
import { TOPIC_NAME } from './names';

/** Topics a page of GET /topics lists at most. */
export const MAX_TOPICS_PAGE = 100;

export const MAX_DESCRIPTION_LENGTH = 1024;

export const topicNameSchema = z.string().check(z.regex(TOPIC_NAME, `must match ${TOPIC_NAME.source}`));

export const createTopicSchema = z.strictObject({
  name: topicNameSchema,
  description: z.optional(z.nullable(z.string().check(z.maxLength(MAX_DESCRIPTION_LENGTH)))),
});

// The rules stated in descriptions are checked against the caller and the table by subscribe() (subscriptions.ts).
export const createSubscriptionSchema = z.strictObject({
  topic: topicNameSchema.check(z.describe('An existing topic (an unknown one is a 404).')),
  user_id: z.optional(identifierSchema('userId', NAMED_USER_RULE)),
});

/** The cursor is the last topic name of the previous page. */
export const listTopicsQuerySchema = z.strictObject({
  limit: pageLimit(MAX_TOPICS_PAGE, 50),
  cursor: z.optional(topicNameSchema),
});

export type ListTopicsQuery = z.output<typeof listTopicsQuerySchema>;
export type CreateTopicInput = z.output<typeof createTopicSchema>;
export type CreateSubscriptionInput = z.output<typeof createSubscriptionSchema>;
