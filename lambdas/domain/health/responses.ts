// Response schemas of the health routes (lambdas/core/response-schemas.ts says why they live apart).
import * as z from '../../core/zod';

const checks = z
  .record(z.string(), z.enum(['ok', 'error']))
  .check(z.describe('one entry per dependency, e.g. `dynamodb`'));

export const liveSchema = z.strictObject({ status: z.literal('ok') });
export const healthSchema = z.strictObject({ status: z.enum(['ok', 'degraded']), checks });
export const readySchema = z.strictObject({ status: z.enum(['ready', 'unavailable']), checks });
