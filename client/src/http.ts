import { backoffDelay, sleep } from './backoff.js';
import { NotifyError } from './errors.js';
import type { ErrorBody } from './wire.js';

export interface RetryOptions {
  /** Tries per request, the first included (default 3). */
  readonly attempts?: number;
  /** Backoff between tries: full jitter below min(maxMs, initialMs · 2^n) (defaults 300 and 5,000 ms). */
  readonly initialMs?: number;
  readonly maxMs?: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown with `retryAfterMs` (30,000). */
  readonly maxRetryAfterMs?: number;
}

export interface HttpOptions {
  /** The REST base, ending in `/api/v1`. */
  readonly apiUrl: string;
  /** Another fetch (tests, instrumented clients); the global one by default. */
  readonly fetch?: typeof fetch;
  readonly retry?: RetryOptions;
}

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly body?: unknown;
  /** Sent as `Idempotency-Key`; makes the request safe to retry. */
  readonly idempotencyKey?: string;
  /** The operation is idempotent by the contract (a second call changes nothing): safe to retry. */
  readonly idempotent?: boolean;
  readonly signal?: AbortSignal;
}

/** A token for the next request; `true` when the last one was refused. */
export type TokenGetter = (forceRefresh: boolean) => Promise<string>;

/** Answers worth another try when the request may be repeated: the service or its gateway was briefly unable. */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/** `Retry-After` in ms (seconds or an HTTP date); undefined when absent or unreadable. */
export const retryAfterMs = (header: string | null): number | undefined => {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
};

const errorOf = async (response: Response): Promise<NotifyError> => {
  const headerId = response.headers.get('x-request-id') ?? undefined;
  const retryAfter = retryAfterMs(response.headers.get('retry-after'));
  let body: Partial<ErrorBody> = {};
  try {
    body = (await response.json()) as Partial<ErrorBody>;
  } catch {
    // Not the service's JSON (a proxy's page): keep the status.
  }
  return new NotifyError(
    typeof body.code === 'string' ? body.code : `http_${response.status}`,
    typeof body.message === 'string' ? body.message : `HTTP ${response.status}`,
    response.status,
    typeof body.request_id === 'string' ? body.request_id : headerId,
    body.details,
    retryAfter,
  );
};

/**
 * The one way the SDK calls the REST API: JSON in and out, the bearer token, errors as NotifyError, and retries
 * only where repeating is harmless — GET, contract-idempotent operations and requests with an Idempotency-Key —
 * on a network failure, 429, 502, 503 or 504. A 429 is retried for any request (it was refused, not run), and so
 * is a 401 once, with a fresh token. `Retry-After` is honoured.
 */
export class HttpClient {
  private readonly fetchImpl: typeof fetch;
  private readonly base: string;

  constructor(
    private readonly options: HttpOptions,
    private readonly token: TokenGetter,
  ) {
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.base = options.apiUrl.replace(/\/+$/, '');
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const retry = this.options.retry ?? {};
    const attempts = Math.max(1, retry.attempts ?? 3);
    const backoff = { initialMs: retry.initialMs ?? 300, maxMs: retry.maxMs ?? 5_000 };
    const repeatable =
      method === 'GET' || options.idempotent === true || options.idempotencyKey !== undefined;
    const query = Object.entries(options.query ?? {})
      .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
      .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
      .join('&');
    const url = `${this.base}${path}${query ? `?${query}` : ''}`;
    let refreshed = false;
    let forceToken = false;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { authorization: `Bearer ${await this.token(forceToken)}` };
      forceToken = false;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
      let response: Response | undefined;
      try {
        response = await this.fetchImpl(url, {
          method,
          headers,
          ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (cause) {
        if (options.signal?.aborted) throw cause;
      }
      if (response?.ok) {
        const text = await response.text();
        return (text ? JSON.parse(text) : undefined) as T;
      }
      const error = response
        ? await errorOf(response)
        : new NotifyError('network', `No answer from ${method} ${path}`);
      if (error.status === 401 && !refreshed) {
        // Refused before anything ran: once more with a token the provider makes anew.
        refreshed = forceToken = true;
        attempt--;
        continue;
      }
      const retryable =
        attempt < attempts &&
        (error.status === 429 || (repeatable && (error.status === 0 || RETRY_STATUSES.has(error.status))));
      if (!retryable) throw error;
      const wait = error.retryAfterMs ?? backoffDelay(attempt - 1, backoff);
      if (wait > (retry.maxRetryAfterMs ?? 30_000)) throw error;
      await sleep(wait);
    }
  }
}

/** A fresh Idempotency-Key: a UUID where the platform has one, else time plus randomness (unique, not secret). */
export const newIdempotencyKey = (): string =>
  (globalThis as { crypto?: { randomUUID?: () => string } }).crypto?.randomUUID?.() ??
  `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
