import * as z from './zod';

/**
 * The `limit` query parameter of a listing: one integer from 1 to `max`, `fallback` when absent. One message for
 * every way to miss it — a repeated parameter reaches the function joined by a comma (API Gateway's payload 2.0:
 * `limit=1&limit=2` is `"1,2"`), which zod's number coercion reported as "expected number, received NaN".
 */
export const pageLimit = (max: number, fallback: number) => {
  const error = `must be one integer from 1 to ${max}`;
  return z._default(
    z.coerce.number({ error }).check(z.int({ error }), z.gte(1, { error }), z.lte(max, { error })),
    fallback,
  );
};
