import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './address-policy';
import { hostIsLiteral } from './url-policy';

export interface SendResult {
  /** HTTP status, or undefined when no answer came (timeout, connection error). */
  readonly status?: number;
  readonly retryAfter?: string;
  /** The answer's `Location` (a Web Push service names the message it accepted there). */
  readonly location?: string;
  readonly error?: string;
  readonly durationMs: number;
}

/** Bytes of a response body read at most (only to free the socket; the body itself is not kept). */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** POSTs a webhook's JSON body to its checked URL and address (`postPinned`). */
export const postTo = (
  url: URL,
  resolved: ResolvedAddress,
  headers: Readonly<Record<string, string>>,
  body: string,
  timeoutMs: number,
): Promise<SendResult> =>
  postPinned(
    url,
    resolved,
    { ...headers, 'content-type': 'application/json', 'user-agent': 'Notify-Webhooks/1' },
    body,
    timeoutMs,
  );

/**
 * POSTs to a user-supplied URL, connecting to the already checked address only (the `lookup` hook returns it,
 * so Node never resolves the name again: no DNS rebinding between check and connect), with the URL's host
 * in the Host header and as TLS SNI / certificate name. Redirects are answers like any other: not followed.
 */
export const postPinned = (
  url: URL,
  resolved: ResolvedAddress,
  headers: Readonly<Record<string, string>>,
  body: string | Uint8Array,
  timeoutMs: number,
): Promise<SendResult> =>
  new Promise((resolve) => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let settled = false;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const pinnedLookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all) {
        (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: resolved.address, family: resolved.family },
        ]);
      } else {
        callback(null, resolved.address, resolved.family);
      }
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        lookup: pinnedLookup,
        ...(url.protocol === 'https:' && !hostIsLiteral(url) ? { servername: url.hostname } : {}),
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
      },
      (res: IncomingMessage) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () => {
          const { 'retry-after': retryAfter, location } = res.headers;
          finish({
            status: res.statusCode,
            ...(retryAfter ? { retryAfter } : {}),
            ...(location ? { location } : {}),
          });
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ error: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => finish({ error: error.code ?? error.message }));
    req.end(body);
  });
