import { jsonLimits } from '../../core/json-limits';
import { SOURCE_RULE } from '../../core/principal';
import * as z from '../../core/zod';
import { eventTypeSchema, PRIORITIES, sourceSchema } from '../notifications/shared-fields';

/** `data` of an event: at most 16 KiB serialized, so its `event` frame stays under API Gateway's 32 KiB frame. */
export const MAX_EVENT_DATA_BYTES = 16 * 1024;

/** Contract §3 "Events": the body of POST /events. */
export const publishEventSchema = z.strictObject({
  event_type: eventTypeSchema,
  // Checked by the handler against the token (sourceOf), stated here for the API documents.
  source: sourceSchema.check(
    z.describe(
      `Printable ASCII without spaces, names separated by single dots, not starting with \`aws.\`; ${SOURCE_RULE}.`,
    ),
  ),
  version: z.number().check(z.int(), z.gte(1), z.lte(Number.MAX_SAFE_INTEGER)),
  data: z.record(z.string(), z.unknown()).check(...jsonLimits<Record<string, unknown>>(MAX_EVENT_DATA_BYTES)),
  priority: z._default(z.enum(PRIORITIES), 'normal'),
  archive: z._default(z.boolean(), false),
});

export type PublishEventInput = z.output<typeof publishEventSchema>;

/** What an accepted event carries on the bus as `detail` (source and event_type are the envelope's). */
export interface EventDetail {
  readonly id: string;
  readonly version: number;
  readonly data: Record<string, unknown>;
  readonly priority: PublishEventInput['priority'];
  readonly archive: boolean;
}
