// Apart from devices.ts so that the routes that validate no body (GET /devices) do not load zod.

import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import { pageLimit } from '../../core/page-limit';
import { NAME_BREAKING_MESSAGE, NAME_CHARACTERS } from '../../core/text-policy';
import * as z from '../../core/zod';

export const PLATFORMS = ['ios', 'android', 'web'] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * Devices one user may register: far above phones, tablets and browsers a person uses, and small enough that
 * the whole list (≤ 100 × ~4.4 KB) fits one response. Past it: 409 until one is deleted.
 */
export const MAX_DEVICES_PER_USER = 100;
export const MAX_DEVICES_PAGE = 100;

// Identifiers, so names under the text policy: no push service issues a token or app id with a newline in it.
const deviceToken = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(IDENTIFIER_CHARACTERS.deviceToken),
    z.regex(NAME_CHARACTERS, NAME_BREAKING_MESSAGE),
  );

export const registerDeviceSchema = z.strictObject({
  token: deviceToken,
  platform: z.enum(PLATFORMS),
  app_id: z.optional(
    z.nullable(
      z
        .string()
        .check(
          z.minLength(1),
          z.maxLength(IDENTIFIER_CHARACTERS.appId),
          z.regex(NAME_CHARACTERS, NAME_BREAKING_MESSAGE),
        ),
    ),
  ),
});

export const deleteDeviceSchema = z.strictObject({ token: deviceToken });

export const listDevicesQuerySchema = z.strictObject({
  limit: pageLimit(MAX_DEVICES_PAGE, MAX_DEVICES_PAGE),
  cursor: z.optional(z.string().check(z.maxLength(64))),
});

export type RegisterDeviceInput = z.output<typeof registerDeviceSchema>;
export type ListDevicesQuery = z.output<typeof listDevicesQuerySchema>;
