// Apart from the broadcast body's schema, so that GET /presence bundles only its own.
import * as z from '../../core/zod';

/** Query of GET /presence. */
export const presenceScopeQuerySchema = z.strictObject({
  scope: z.string().check(z.regex(/^room:\S{1,256}$/, 'must be room:<id>')),
});
