export interface BackoffOptions {
  /** First delay ceiling, ms (default 500). */
  readonly initialMs?: number;
  /** Largest delay ceiling, ms (default 30,000). */
  readonly maxMs?: number;
}

/**
 * Exponential backoff with full jitter (a random delay between 0 and min(max, initial · 2^attempt)), so that
 * clients dropped together do not come back together.
 */
export const backoffDelay = (attempt: number, options: BackoffOptions = {}): number =>
  Math.random() * Math.min(options.maxMs ?? 30_000, (options.initialMs ?? 500) * 2 ** attempt);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
