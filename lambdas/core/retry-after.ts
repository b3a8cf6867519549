/** Longest wait a Retry-After can ask for. */
const MAX_RETRY_AFTER_SECS = 24 * 3600;

/**
 * An HTTP `Retry-After` (delta-seconds or an HTTP date) as seconds from `now`, at most a day; undefined when absent
 * or unreadable. Webhook endpoints and push providers answer with it.
 */
export const retryAfterSecs = (value: string | null | undefined, now: Date): number | undefined => {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), MAX_RETRY_AFTER_SECS);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, (at - now.getTime()) / 1000), MAX_RETRY_AFTER_SECS);
};
