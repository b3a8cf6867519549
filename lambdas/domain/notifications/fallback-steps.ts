// Apart from the schema so that the fan-out and push workers, which validate nothing, do not load it.
import type { PushRouting } from '../push/routing';
import type { Channel } from './channels';

/*
 * Fallback across channels (docs/delivery-rules.md, "Fallback"): an ordered list of steps, each a channel that is
 * not delivered with the notification but `after_secs` later, and only while the recipient's feed item is still
 * not seen (`unless: seen`) or not read (`unless: read`). `push.when: unread` is the one-step case of the same
 * model: `fallbackOf` reads it as `[{channel: push, after_secs, unless: read}]`.
 */

/** The channels a step may name: the loud ones, which a feed item can make unnecessary. */
export const FALLBACK_CHANNELS = ['push', 'toast'] as const;
export type FallbackChannel = (typeof FALLBACK_CHANNELS)[number];

/** What stops a step: the item seen, or read (an item read has been seen). */
export const FALLBACK_UNLESS = ['seen', 'read'] as const;
export type FallbackUnless = (typeof FALLBACK_UNLESS)[number];

export const MAX_FALLBACK_STEPS = 3;
export const MAX_FALLBACK_AFTER_SECS = 7 * 24 * 3600;

export interface FallbackStep {
  readonly channel: FallbackChannel;
  /** Seconds after the recipient's delivery; strictly increasing along the list. */
  readonly after_secs: number;
  readonly unless: FallbackUnless;
}

/** What `fallbackOf` needs of a notification. */
export interface FallbackFacts {
  readonly channels: readonly Channel[];
  readonly push?: PushRouting;
  readonly fallback?: readonly FallbackStep[];
  readonly preference_defaults?: { readonly fallback?: readonly FallbackStep[] };
}

/**
 * The steps of a notification: its own `fallback`, else its `push.when: unread` as one step, else the fallback of
 * the default rule fixed on it at creation. A default's step whose channel the notification does not use is left
 * out, and a notification without a feed item (`in_app`) has nothing a step could test: no default steps.
 */
export const fallbackOf = (notification: FallbackFacts): readonly FallbackStep[] => {
  if (notification.fallback) return notification.fallback;
  const { push } = notification;
  if (push?.when === 'unread' && push.after_secs !== undefined) {
    return [{ channel: 'push', after_secs: push.after_secs, unless: 'read' }];
  }
  const defaults = notification.preference_defaults?.fallback;
  if (!defaults || !notification.channels.includes('in_app')) return [];
  return defaults.filter((step) => notification.channels.includes(step.channel));
};

/** The channels the steps deliver later: not delivered with the notification. */
export const steppedChannels = (steps: readonly FallbackStep[]): readonly Channel[] =>
  steps.map((step) => step.channel);
