import { httpRoute } from '../../../core/http/route';
import { createTopicSchema } from '../../../domain/topics/schema';
import { createTopic } from '../../../domain/topics/topics';

export const handler = httpRoute('topics.create', { body: createTopicSchema }, async (request) => ({
  status: 201,
  body: await createTopic(request.principal, request.body),
}));
