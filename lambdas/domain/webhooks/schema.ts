import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import * as z from '../../core/zod';
import { EVENT_TYPE_PATTERN as FILTER } from './filters';
import { secretProblem } from './signature';

export const MIN_SECRET_CHARS = 16;
export const MAX_FILTERS = 50;

/** Contract §3 "Webhooks": the body of POST /webhooks. */
export const createWebhookSchema = z.strictObject({
  // Checked by createWebhook (url-policy.ts, address-policy.ts), which can resolve the host.
  url: z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(2048),
      z.describe(
        'An absolute `https://` URL without credentials or port 0 (plain `http://` only to a loopback address on ' +
          'the local runtime). A host that does not resolve is a 400; a host resolving to a private, link-local, ' +
          'metadata or reserved address is a 400, and to a loopback address too except on the local runtime.',
      ),
    ),
  secret: z.string().check(
    z.minLength(MIN_SECRET_CHARS),
    z.maxLength(1024),
    z.superRefine((secret, context) => {
      const problem = secretProblem(secret);
      if (problem) context.addIssue({ code: 'custom', message: problem, input: secret });
    }),
    z.describe(
      'The HMAC key: its UTF-8 bytes as given, or, written `whsec_<base64>`, the decoded bytes (standard base64, ' +
        'at least 16 bytes). Never returned.',
    ),
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
      z.meta({ uniqueItems: true }),
      z.describe('Unique patterns: an exact event type, `prefix.*` or `*`.'),
    ),
  name: z
    .string()
    .check(
      z.trim(),
      z.minLength(1),
      z.maxLength(256),
      z.describe('Trimmed of surrounding whitespace, then 1–256 characters.'),
    ),
});

export type CreateWebhookInput = z.output<typeof createWebhookSchema>;
