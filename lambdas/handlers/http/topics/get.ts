import { httpRoute } from '../../../core/http/route';
import { getTopic } from '../../../domain/topics/topics';

export const handler = httpRoute('topics.get', {}, async (request) => ({
  status: 200,
  body: await getTopic(request.pathParameters.name ?? ''),
}));
