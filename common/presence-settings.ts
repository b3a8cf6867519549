import * as envNames from './env-names';
import { positiveIntegerSetting } from './settings';

/** When rooms stop getting a `presence` frame per change, and how often they get a summary instead. */
export interface PresenceSettings {
  /** Rooms with at most this many subscribed connections get a `presence` frame per change. */
  readonly announceMax: number;
  /** Larger rooms get one `presence.summary` this many seconds after their first unannounced change. */
  readonly summarySecs: number;
}

/**
 * The stage setting `scale.presence` (docs/realtime.md, presence in large rooms). 100 is Pusher's cap on a
 * presence channel: a change then costs its request ≤ 100 posts. 30 s is a viewer count's usual refresh; a
 * summary costs one post per subscriber, so a 100,000-member room with constant churn gets 3,333 posts/s.
 */
export const DEFAULT_PRESENCE_SCALE: PresenceSettings = { announceMax: 100, summarySecs: 30 };

/** Read on every call, so a test can change the environment between cases. */
export const presenceSettings = (): PresenceSettings => ({
  announceMax: positiveIntegerSetting(envNames.presenceAnnounceMax, DEFAULT_PRESENCE_SCALE.announceMax),
  summarySecs: positiveIntegerSetting(envNames.presenceSummarySecs, DEFAULT_PRESENCE_SCALE.summarySecs),
});
