import { httpRoute } from '../../../core/http/route';
import { listTopicsQuerySchema } from '../../../domain/topics/schema';
import { listTopics } from '../../../domain/topics/topics';

export const handler = httpRoute('topics.list', { query: listTopicsQuerySchema }, async (request) => ({
  status: 200,
  body: await listTopics(request.query),
}));
