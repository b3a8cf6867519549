import { httpRoute } from '../../../core/http/route';
import { sourceOf } from '../../../core/principal';
import { publishEvent } from '../../../domain/events/publish';
import { publishEventSchema } from '../../../domain/events/schema';
import { withIdempotency } from '../../../domain/idempotency';

export const handler = httpRoute('events.publish', { body: publishEventSchema }, async (request) => {
  sourceOf(request.principal, request.body.source);
  const scope = {
    operation: 'events.publish',
    principal: request.principal,
    key: request.headers['idempotency-key'],
  };
  const response = await withIdempotency(scope, request.body, (id) => publishEvent(request.body, id));
  return { status: response.status, body: response.body };
});
