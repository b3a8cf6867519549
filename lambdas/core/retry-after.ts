/** Longest wait a Retry-After can ask for. */
const MAX_RETRY_AFTER_SECS = 24 * 3600;

/** Retry-After as seconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export const retryAfterSecs = (value: string | null | undefined, now: Date): number | undefined => {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), MAX_RETRY_AFTER_SECS);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, (at - now.getTime()) / 1000), MAX_RETRY_AFTER_SECS);
};
