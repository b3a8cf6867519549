/**
 * What opaque tokens cost: the IdP introspection calls per 1,000 requests of one user, with the token cached
 * (the same token on every request, as an app sends it) and uncached (a new token on every request), next to a
 * JWT (no call). A local RFC 7662 endpoint answers (test/support/introspection-server.ts); the local runtime is
 * one process, so one cache and one call budget, as one Lambda instance has.
 */
import { metering as lambdaMetering } from '../local/lambda/runner';
import { type Runtime, startRuntime } from '../local/runtime';
import {
  type IntrospectionServer,
  introspectionEnvFor,
  startIntrospectionServer,
  userAnswer,
} from '../test/support/introspection-server';
import { authEnvFor } from '../test/support/tokens';

export interface IntrospectionCostRow {
  readonly token: 'opaque, cached' | 'opaque, uncached' | 'JWT';
  readonly requests: number;
  /** Introspection calls the IdP answered during the requests. */
  readonly idpCalls: number;
  readonly idpCallsPer1000Requests: number;
  /** Mean wall time of a request as the client sees it, in ms (loopback IdP: no network latency). */
  readonly meanRequestMs: number;
  /** Mean billed duration of the route's function per request, in ms. */
  readonly meanFunctionMs: number;
}

export interface IntrospectionCost {
  /** The cache lifetime the run used (the default): a cached user costs one call per this many seconds. */
  readonly cacheTtlSecs: number;
  readonly rows: IntrospectionCostRow[];
}

const ROUTE = '/notifications/unread-count';
const CACHE_TTL_SECS = 60;

const functionMs = (): number =>
  [...lambdaMetering.functions.values()].reduce((total, meter) => total + meter.totalDurationMs, 0);

interface Row {
  readonly token: IntrospectionCostRow['token'];
  readonly tokens: readonly string[];
  idpCalls: number;
  requestMs: number;
  functionMs: number;
}

/**
 * The rows' requests in turns (one of each row, then the next), so that a busy moment of the machine weighs on
 * every row alike; each request is sequential, so the calls and durations it caused are its own.
 */
const measureInTurns = async (runtime: Runtime, idp: IntrospectionServer, rows: Row[]): Promise<void> => {
  const requests = Math.max(...rows.map((row) => row.tokens.length));
  for (let index = 0; index < requests; index += 1) {
    for (const row of rows) {
      const bearer = row.tokens[index];
      if (bearer === undefined) continue;
      const callsBefore = idp.calls;
      const functionBefore = functionMs();
      const started = performance.now();
      const response = await fetch(`${runtime.httpUrl}${ROUTE}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`bench: ${row.token} request answered ${response.status}`);
      row.requestMs += performance.now() - started;
      row.functionMs += functionMs() - functionBefore;
      row.idpCalls += idp.calls - callsBefore;
    }
  }
};

/** `requests` sequential requests of one user per row. */
export const measureIntrospectionCost = async (requests: number): Promise<IntrospectionCost> => {
  const idp = await startIntrospectionServer();
  const runtime = await startRuntime({
    port: 0,
    quiet: true,
    delivery: { mode: 'exact' },
    env: {
      ...authEnvFor(undefined),
      // A budget above the uncached row's rate: this measures calls, not the budget's 503s.
      ...introspectionEnvFor(idp, { cacheTtl: `${CACHE_TTL_SECS}s`, callsPerSec: 100_000 }),
    },
  });
  try {
    // The route's function is warmed first, so its cold start is in no row (with a token of no row).
    const warmUp = idp.issue(userAnswer('bench-warm-up'));
    await fetch(`${runtime.httpUrl}${ROUTE}`, { headers: { authorization: `Bearer ${warmUp}` } });
    const cachedToken = idp.issue(userAnswer('bench-user'));
    const jwt = await runtime.mintUserToken('bench-user', { expiresInSecs: 3600 });
    const row = (token: Row['token'], tokens: string[]): Row => ({
      token,
      tokens,
      idpCalls: 0,
      requestMs: 0,
      functionMs: 0,
    });
    const rows = [
      row(
        'opaque, cached',
        Array.from({ length: requests }, () => cachedToken),
      ),
      row(
        'opaque, uncached',
        Array.from({ length: requests }, () => idp.issue(userAnswer('bench-user'))),
      ),
      row(
        'JWT',
        Array.from({ length: requests }, () => jwt),
      ),
    ];
    await measureInTurns(runtime, idp, rows);
    return {
      cacheTtlSecs: CACHE_TTL_SECS,
      rows: rows.map(({ token, tokens, idpCalls, requestMs, functionMs }) => ({
        token,
        requests: tokens.length,
        idpCalls,
        idpCallsPer1000Requests: (idpCalls / tokens.length) * 1000,
        meanRequestMs: requestMs / tokens.length,
        meanFunctionMs: functionMs / tokens.length,
      })),
    };
  } finally {
    await runtime.stop();
    await idp.stop();
  }
};
