/**
 * Readable logs for the terminal of `npm start`. Handlers log as they do in Lambda: one JSON line per record
 * (Powertools logger, lambdas/core/logger.ts). The local runtime rewrites those lines as it writes them to the
 * terminal — handler code never branches on where it runs — into one short line each:
 *
 *   19:32:46.729 INFO  202 notifications.create 103ms service:dev-service 01a204bf-29a1-7050-a117-b8cd21a43c8f
 *   19:32:47.001 ERROR webhook attempt failed endpoint_id=… error=TypeError: fetch failed
 *
 * `npm start -- --json-logs` keeps the JSON lines.
 */

/** Keys every record has, or that only matter on AWS: left out of the short line. */
const HIDDEN_KEYS = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'sampling_rate',
  'xray_trace_id',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
]);

type Style = 'dim' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta';
const ANSI: Record<Style, [number, number]> = {
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  magenta: [35, 39],
};

const LEVEL_STYLE: Record<string, Style> = {
  TRACE: 'dim',
  DEBUG: 'dim',
  INFO: 'green',
  WARN: 'yellow',
  ERROR: 'red',
  CRITICAL: 'magenta',
};

const statusStyle = (status: number): Style =>
  status >= 500 ? 'red' : status >= 400 ? 'yellow' : status >= 300 ? 'cyan' : 'green';

const valueText = (value: unknown): string => {
  if (typeof value === 'string') return /[\s"]/.test(value) ? JSON.stringify(value) : value;
  if (value !== null && typeof value === 'object') {
    const error = value as { name?: unknown; message?: unknown };
    if (typeof error.name === 'string' && typeof error.message === 'string') {
      return `${error.name}: ${error.message}`;
    }
    return JSON.stringify(value);
  }
  return String(value);
};

/** A Powertools record, or undefined when `line` is anything else (printed as it is). */
export const parseLogRecord = (line: string): Record<string, unknown> | undefined => {
  if (!line.startsWith('{') || !line.endsWith('}')) return undefined;
  try {
    const record = JSON.parse(line) as unknown;
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
    const { level, message, timestamp } = record as Record<string, unknown>;
    if (typeof level !== 'string' || typeof message !== 'string' || typeof timestamp !== 'string')
      return undefined;
    return record as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

/** The short form of one log line, or undefined when it is not a Powertools record. */
export const formatLogLine = (line: string, colors: boolean): string | undefined => {
  const record = parseLogRecord(line.trim());
  if (!record) return undefined;
  const paint = (style: Style, text: string) =>
    colors ? `\u001b[${ANSI[style][0]}m${text}\u001b[${ANSI[style][1]}m` : text;
  const level = String(record.level);
  const time = Number.isNaN(Date.parse(String(record.timestamp)))
    ? String(record.timestamp)
    : new Date(String(record.timestamp)).toISOString().slice(11, 23);
  const parts = [paint('dim', time), paint(LEVEL_STYLE[level] ?? 'dim', level.padEnd(5))];
  const rest = { ...record };
  const status = rest.status;
  // The access log of lambdas/core/http/route.ts: status, route, latency, caller.
  if (record.message === 'request' && typeof status === 'number') {
    parts.push(paint(statusStyle(status), String(status)), String(rest.route ?? ''));
    if (typeof rest.latency_ms === 'number') parts.push(paint('dim', `${Math.round(rest.latency_ms)}ms`));
    if (typeof rest.principal === 'string') parts.push(rest.principal);
    for (const key of ['status', 'route', 'latency_ms', 'principal']) delete rest[key];
  } else {
    parts.push(String(record.message));
  }
  const requestId = rest.request_id;
  delete rest.request_id;
  let stack: string | undefined;
  for (const [key, value] of Object.entries(rest)) {
    if (HIDDEN_KEYS.has(key) || value === undefined) continue;
    parts.push(`${paint('dim', `${key}=`)}${valueText(value)}`);
    const errorStack = (value as { stack?: unknown } | null)?.stack;
    if (typeof errorStack === 'string' && stack === undefined) stack = errorStack;
  }
  if (requestId !== undefined) parts.push(paint('dim', String(requestId)));
  const text = parts.filter((part) => part !== '').join(' ');
  // The stack of a logged error, below its line (its first line repeats the message).
  const stackLines = stack?.split('\n').slice(1).join('\n');
  return stackLines ? `${text}\n${paint('dim', stackLines)}` : text;
};

/** Whether `stream` is a terminal that shows colours (honours NO_COLOR and FORCE_COLOR). */
const showsColors = (stream: NodeJS.WriteStream): boolean =>
  typeof stream.hasColors === 'function'
    ? stream.hasColors()
    : Boolean(process.env.FORCE_COLOR && process.env.FORCE_COLOR !== '0');

/**
 * Rewrites the log records written to `stream` (process.stdout / stderr) in their short form; anything else
 * passes unchanged. The Powertools logger writes each record with one write call, a whole line.
 */
export const shortenLogRecords = (stream: NodeJS.WriteStream): void => {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const colors = showsColors(stream);
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text =
      typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : undefined;
    const short = text?.endsWith('\n') ? formatLogLine(text, colors) : undefined;
    return short === undefined ? write(chunk, ...rest) : write(`${short}\n`, ...rest);
  }) as typeof stream.write;
};
