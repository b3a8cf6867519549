/**
 * Asks the app for a user token. `forceRefresh` is true when the SDK needs a new one (the last is about to expire
 * or the service refused it): bypass any cache of your own then.
 */
export type TokenProvider = (context: { readonly forceRefresh: boolean }) => string | Promise<string>;

/** Refresh this long before the token expires, at most (and at most a fifth of its lifetime). */
const REFRESH_MARGIN_MS = 60_000;
/**
 * Never refresh sooner than this (or half the token's lifetime, for very short tokens): a clock far ahead, or a
 * provider that keeps returning an old token, must not turn refreshing into a loop.
 */
const MIN_REFRESH_DELAY_MS = 5_000;

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Decodes base64url to a string of char codes (no atob: older React Native engines lack it). */
const decodeBase64Url = (text: string): string => {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const char of text) {
    const index = BASE64URL.indexOf(char);
    if (index < 0) break;
    value = (value << 6) | index;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((value >> bits) & 0xff);
    }
  }
  return out;
};

/** `exp` and `iat` of a JWT, read without verifying (the service verifies); undefined when unreadable. */
export const tokenTimes = (token: string): { exp?: number; iat?: number } => {
  try {
    const claims = JSON.parse(decodeBase64Url(token.split('.')[1] ?? '')) as { exp?: unknown; iat?: unknown };
    return {
      ...(typeof claims.exp === 'number' ? { exp: claims.exp } : {}),
      ...(typeof claims.iat === 'number' ? { iat: claims.iat } : {}),
    };
  } catch {
    return {};
  }
};

/**
 * Holds the current token for REST and realtime alike: asks the provider once for concurrent callers, reuses the
 * token until shortly before it expires, and says when to refresh. Expiry is judged on this device's clock from
 * the token's lifetime (`exp − iat`) as well as from `exp`, whichever is sooner, so a device clock that is off
 * does not keep an expired token.
 */
export class TokenSource {
  private token: string | undefined;
  private refreshAtMs = 0;
  private minDelayMs = MIN_REFRESH_DELAY_MS;
  private pending: Promise<string> | undefined;

  constructor(private readonly provider: TokenProvider) {}

  /** A token: the held one while it is fresh, else a new one from the provider. */
  get(forceRefresh = false): Promise<string> {
    if (!forceRefresh && this.token !== undefined && Date.now() < this.refreshAtMs) {
      return Promise.resolve(this.token);
    }
    if (!this.pending) {
      this.pending = (async () => {
        try {
          const token = await this.provider({ forceRefresh: forceRefresh || this.token !== undefined });
          this.hold(token);
          return token;
        } finally {
          this.pending = undefined;
        }
      })();
    }
    return this.pending;
  }

  /** Milliseconds until the held token should be replaced; undefined when it carries no `exp`. */
  refreshDelay(): number | undefined {
    if (this.refreshAtMs === Number.POSITIVE_INFINITY) return undefined;
    return Math.max(this.minDelayMs, this.refreshAtMs - Date.now());
  }

  private hold(token: string): void {
    const now = Date.now();
    const { exp, iat } = tokenTimes(token);
    this.token = token;
    if (exp === undefined) {
      // Without `exp` the SDK cannot know when it ends: ask the provider each time one is needed.
      this.refreshAtMs = Number.POSITIVE_INFINITY;
      this.token = undefined;
      return;
    }
    const lifetimeMs = iat !== undefined && exp > iat ? (exp - iat) * 1000 : undefined;
    const expiresAtMs = Math.min(exp * 1000, lifetimeMs === undefined ? Infinity : now + lifetimeMs);
    const margin = Math.min(REFRESH_MARGIN_MS, (lifetimeMs ?? REFRESH_MARGIN_MS * 5) / 5);
    this.refreshAtMs = expiresAtMs - margin;
    this.minDelayMs = Math.min(MIN_REFRESH_DELAY_MS, (lifetimeMs ?? Infinity) / 2);
  }
}

/** The TokenSource given, or one made from the provider given. */
export const tokenSourceOf = (options: { getToken?: TokenProvider; tokens?: TokenSource }): TokenSource => {
  if (options.tokens) return options.tokens;
  if (!options.getToken) throw new TypeError('Notify: pass getToken (a token provider) or tokens');
  return new TokenSource(options.getToken);
};
