import { describe, expect, it } from 'vitest';
import { formatLogLine } from '../../../local/log-format';

/** The short lines `npm start` shows instead of the handlers' JSON records (local/log-format.ts). */
const record = (fields: Record<string, unknown>) =>
  JSON.stringify({
    level: 'INFO',
    message: 'request',
    timestamp: '2026-11-22T19:32:46.729Z',
    service: 'notify',
    sampling_rate: 0,
    ...fields,
  });

describe('formatLogLine', () => {
  it('shortens an access log record to status, route, latency, caller and request id', () => {
    const line = record({
      request_id: '01a204bf-29a1-7050-a117-b8cd21a43c8f',
      route: 'notifications.create',
      function_name: 'notify-local-notifications-create',
      function_request_id: '28e0a4f9-ca48-45ac-8671-0cc474e61871',
      cold_start: false,
      principal: 'service:dev-service',
      status: 202,
      latency_ms: 103.36,
    });
    expect(formatLogLine(`${line}\n`, false)).toBe(
      '19:32:46.729 INFO  202 notifications.create 103ms service:dev-service 01a204bf-29a1-7050-a117-b8cd21a43c8f',
    );
  });

  it('keeps the keys of other records and puts an error stack under its line', () => {
    const error = {
      name: 'TypeError',
      message: 'fetch failed',
      stack: 'TypeError: fetch failed\n    at deliver (x.ts:1:1)',
    };
    const line = record({
      level: 'ERROR',
      message: 'webhook attempt',
      endpoint_id: 'wh 1',
      attempt: 2,
      error,
    });
    expect(formatLogLine(line, false)).toBe(
      '19:32:46.729 ERROR webhook attempt endpoint_id="wh 1" attempt=2 error=TypeError: fetch failed\n    at deliver (x.ts:1:1)',
    );
  });

  it('colours level and status only when asked', () => {
    const coloured = formatLogLine(record({ status: 503, route: 'health.ready' }), true) as string;
    expect(coloured).toContain('\u001b[32mINFO \u001b[39m');
    expect(coloured).toContain('\u001b[31m503\u001b[39m');
    expect(formatLogLine(record({ status: 503, route: 'health.ready' }), false)).not.toContain('\u001b[');
  });

  it('leaves everything that is not a log record alone', () => {
    for (const line of [
      'Notify is running',
      '{"status":"ok"}',
      '{not json}',
      '[lambda x] Error: boom',
      '[1,2]',
    ]) {
      expect(formatLogLine(line, false)).toBeUndefined();
    }
  });
});
