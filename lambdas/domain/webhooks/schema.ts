import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import * as z from '../../core/zod';
import { EVENT_TYPE_PATTERN as FILTER } from './filters';
import { secretProblem } from './signature';

export const MIN_SECRET_CHARS = 16;
export const MAX_FILTERS = 50;

/** Contract §3 "Webhooks": the body of POST /webhooks. */
export const createWebhookSchema = z.strictObject({
  url: z.string().check(z.minLength(1), z.maxLength(2048)),
  secret: z.string().check(
    z.minLength(MIN_SECRET_CHARS),
    z.maxLength(1024),
    z.superRefine((secret, context) => {
      const problem = secretProblem(secret);
      if (problem) context.addIssue({ code: 'custom', message: problem, input: secret });
    }),
  ),
  event_filters: z
    .array(
      z
        .string()
        .check(
          z.minLength(1),
          z.maxLength(IDENTIFIER_CHARACTERS.eventPattern),
          z.regex(FILTER, 'must be an event type, `prefix.*` or `*`'),
        ),
    )
    .check(
      z.minLength(1),
      z.maxLength(MAX_FILTERS),
      z.refine((filters) => new Set(filters).size === filters.length, {
        message: 'must not repeat a filter',
      }),
    ),
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(256)),
});

export type CreateWebhookInput = z.output<typeof createWebhookSchema>;
