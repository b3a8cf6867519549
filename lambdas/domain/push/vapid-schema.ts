// The VAPID key route's query and answer (apart from vapid.ts, as every route's schemas are: lambdas/core/response-schemas.ts).
import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import { NAME_BREAKING_MESSAGE, NAME_CHARACTERS } from '../../core/text-policy';
import * as z from '../../core/zod';

export const vapidPublicKeyQuerySchema = z.strictObject({
  /** Absent: the stage's default app. */
  app_id: z.optional(
    z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(IDENTIFIER_CHARACTERS.appId),
        z.regex(NAME_CHARACTERS, NAME_BREAKING_MESSAGE),
      ),
  ),
});

export const vapidPublicKeySchema = z.strictObject({
  app_id: z.string(),
  /** base64url of the uncompressed P-256 point: the `applicationServerKey` of `pushManager.subscribe`. */
  public_key: z.string(),
});
