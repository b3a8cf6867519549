// Apart from devices.ts so that the routes that validate no body (GET /devices) do not load zod.
import * as z from '../../core/zod';

export const PLATFORMS = ['ios', 'android', 'web'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Push tokens: APNs 64 hex, FCM ~160 characters, a Web Push subscription endpoint URL; 4096 leaves room. */
const deviceToken = z.string().check(z.minLength(1), z.maxLength(4096));

export const registerDeviceSchema = z.strictObject({
  token: deviceToken,
  platform: z.enum(PLATFORMS),
  app_id: z.optional(z.nullable(z.string().check(z.minLength(1), z.maxLength(256)))),
});

export const deleteDeviceSchema = z.strictObject({ token: deviceToken });

export type RegisterDeviceInput = z.output<typeof registerDeviceSchema>;
