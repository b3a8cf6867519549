import { httpRoute } from '../../../core/http/route';
import { createSubscriptionSchema } from '../../../domain/topics/schema';
import { subscribe } from '../../../domain/topics/subscriptions';

export const handler = httpRoute(
  'subscriptions.create',
  { body: createSubscriptionSchema },
  async (request) => {
    const { subscription, created } = await subscribe(request.principal, request.body);
    return { status: created ? 201 : 200, body: subscription };
  },
);
