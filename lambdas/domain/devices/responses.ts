// Response schemas of the device routes (lambdas/core/response-schemas.ts says why they live apart).
import { pageOf, timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { PLATFORMS } from './schema';

export const deviceSchema = z.strictObject({
  token: z.string(),
  platform: z.enum(PLATFORMS),
  app_id: z.nullable(z.string()),
  created_at: timestamp,
});

export const deviceListSchema = pageOf(deviceSchema);
