/**
 * Building blocks of the response and frame schemas (lambdas/domain/<area>/responses.ts): what the service
 * answers, described once in zod so that the API documents (docs/api/) are generated from them and the
 * end-to-end tests check every response against those documents. Not imported by handlers: no bundle carries them.
 */
import { STATUS_OF } from './errors';
import * as z from './zod';

/** An RFC 3339 timestamp as the service writes it (`Date.toISOString()`, UTC). */
export const timestamp = z.isoDateTime({ offset: true });

/** A list answer: `{ "items": [...] }`. */
export const itemsOf = <T extends z.core.$ZodType>(item: T) => z.strictObject({ items: z.array(item) });

/** A page of a listing: `{ "items": [...], "next_cursor": string | null }`; null on the last page. */
export const pageOf = <T extends z.core.$ZodType>(item: T) =>
  z.strictObject({ items: z.array(item), next_cursor: z.nullable(z.string()) });

export const ERROR_CODES = Object.keys(STATUS_OF) as (keyof typeof STATUS_OF)[];

/** Contract §3's error body (common/error-body.ts `errorBody`). */
export const errorBodySchema = z.strictObject({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  request_id: z.string(),
  details: z.optional(
    z
      .array(
        z.strictObject({
          field: z
            .string()
            .check(
              z.describe('path of the offending field, e.g. `recipient_ids[3]`, `channels` or `(body)`'),
            ),
          issue: z.string(),
        }),
      )
      .check(z.describe('with `validation` only: one entry per offending field')),
  ),
});
