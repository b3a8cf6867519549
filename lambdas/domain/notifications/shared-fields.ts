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
