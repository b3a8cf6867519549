// Response schemas of the device routes (lambdas/core/response-schemas.ts says why they live apart).

import { APNS_ENVIRONMENTS, PUSH_PROVIDERS } from '../../../common/settings';
import { pageOf, timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { PLATFORMS } from './schema';

export const deviceSchema = z.strictObject({
  token: z.string(),
  platform: z.enum(PLATFORMS),
  provider: z.enum(PUSH_PROVIDERS),
  app_id: z.nullable(z.string()),
  /** APNs devices: the environment pushes go to; null for other providers. */
  apns_environment: z.nullable(z.enum(APNS_ENVIRONMENTS)),
  /** Web Push devices: the subscription's public key (its `auth` secret is never returned); null for others. */
  web_keys: z.nullable(z.strictObject({ p256dh: z.string() })),
  created_at: timestamp,
});

export const deviceListSchema = pageOf(deviceSchema);
