// Apart from devices.ts so that the routes that validate no body (GET /devices) do not load zod.
import { z } from 'zod';

export const PLATFORMS = ['ios', 'android', 'web'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Push tokens: APNs 64 hex, FCM ~160 characters, a Web Push subscription endpoint URL; 4096 leaves room. */
const deviceToken = z.string().min(1).max(4096);

export const registerDeviceSchema = z.strictObject({
  token: deviceToken,
  platform: z.enum(PLATFORMS),
  app_id: z.string().min(1).max(256).nullable().optional(),
});

export const deleteDeviceSchema = z.strictObject({ token: deviceToken });

export type RegisterDeviceInput = z.output<typeof registerDeviceSchema>;
