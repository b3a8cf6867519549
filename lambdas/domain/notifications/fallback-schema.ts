// Apart from schema.ts: PUT /preferences/defaults takes a fallback too, and esbuild keeps a module's top-level zod
// calls, so importing it from schema.ts would carry the notification schema into the preferences routes.
import * as z from '../../core/zod';
import {
  FALLBACK_CHANNELS,
  FALLBACK_UNLESS,
  MAX_FALLBACK_AFTER_SECS,
  MAX_FALLBACK_STEPS,
} from './fallback-steps';

const fallbackStepSchema = z.strictObject({
  channel: z.enum(FALLBACK_CHANNELS),
  after_secs: z
    .int()
    .check(
      z.gte(1),
      z.lte(MAX_FALLBACK_AFTER_SECS),
      z.describe('Seconds after the delivery; increasing along the list.'),
    ),
  unless: z._default(
    z.enum(FALLBACK_UNLESS).check(z.describe('What stops the step (a read item is seen).')),
    'read',
  ),
});

/** Steps in time order, each channel once (a channel is delivered by one step). */
const orderedSteps = z.superRefine((steps: readonly { channel: string; after_secs: number }[], context) => {
  steps.forEach((step, index) => {
    const previous = steps[index - 1];
    if (previous && step.after_secs <= previous.after_secs) {
      context.addIssue({
        code: 'custom',
        path: [index, 'after_secs'],
        message: `must be greater than fallback[${index - 1}].after_secs`,
      });
    }
    if (steps.findIndex((other) => other.channel === step.channel) < index) {
      context.addIssue({ code: 'custom', path: [index, 'channel'], message: 'duplicate channel' });
    }
  });
});

export const fallbackSchema = z
  .array(fallbackStepSchema)
  .check(
    z.minLength(1),
    z.maxLength(MAX_FALLBACK_STEPS),
    orderedSteps,
    z.describe(
      'Channels sent later, in order, each only while the feed item is not seen / not read (nor archived, ' +
        'snoozed, expired). docs/delivery-rules.md.',
    ),
  );
