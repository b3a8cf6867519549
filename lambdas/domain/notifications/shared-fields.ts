import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import * as z from '../../core/zod';

/**
 * Fields the bodies of POST /notifications and POST /events share, in a module of their own: the events
 * route imports them without the notification schema (whose zod types were 16 KiB of its bundle).
 */
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

export type Priority = (typeof PRIORITIES)[number];

/** A dotted event name (`billing.invoice_ready`), shared by notifications and events. */
export const eventTypeSchema = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(IDENTIFIER_CHARACTERS.eventType),
    z.regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be a dotted event name'),
  );

/**
 * A `source` (notifications and events): printable ASCII, dot-separated names none of them empty (`billing`,
 * `billing.invoices`; not `billing.` or `billing..x`). Who may state which source is decided apart
 * (core/principal.ts, `sourceOf`).
 */
export const sourceSchema = z.string().check(
  z.minLength(1),
  z.maxLength(128),
  z.regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
  z.regex(/^[^.]+(\.[^.]+)*$/, 'must be names separated by single dots, none of them empty'),
  // EventBridge refuses sources starting with `aws.` (they belong to AWS services).
  z.refine((source) => !source.toLowerCase().startsWith('aws.'), { message: 'must not start with aws.' }),
);
