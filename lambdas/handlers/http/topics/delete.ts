import { httpRoute } from '../../../core/http/route';
import { deleteTopic } from '../../../domain/topics/deletion';

export const handler = httpRoute('topics.delete', {}, async (request) => ({
  status: 202,
  body: await deleteTopic(request.pathParameters.name ?? ''),
}));
