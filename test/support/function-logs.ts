/**
 * Set-up file of every test worker (vitest.config.ts `setupFiles`). Handlers log as on Lambda: the Powertools
 * logger writes its JSON records straight to process.stdout / stderr, past vitest's console capture, so a green
 * run printed every error a test provokes on purpose. Here each record goes to the console instead: vitest keeps
 * it with the test that was running and prints it only when that test fails (`silent: 'passed-only'`). A test
 * that expects a failure to be logged reads the records with `recordFunctionLogs()` and asserts them.
 */
import { onTestFinished } from 'vitest';
import { parseLogRecord } from '../../local/log-format';

export type FunctionLogRecord = Record<string, unknown> & {
  readonly level: string;
  readonly message: string;
};

// One set per process, should this module be evaluated again in the same worker.
const shared = globalThis as { functionLogListeners?: Set<(record: FunctionLogRecord) => void> };
const listeners = shared.functionLogListeners ?? new Set<(record: FunctionLogRecord) => void>();
let forwarding = false;

const routeRecords = (stream: NodeJS.WriteStream, toConsole: (text: string) => void): void => {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text =
      typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : undefined;
    // The logger writes each record with one call, a whole line. A console that writes to this stream itself
    // (vitest's `disableConsoleIntercept`) would come back here: that write passes through.
    const record = !forwarding && text?.endsWith('\n') ? parseLogRecord(text.trim()) : undefined;
    if (!record) return write(chunk, ...rest);
    for (const listener of listeners) listener(record as FunctionLogRecord);
    forwarding = true;
    try {
      toConsole((text as string).trimEnd());
    } finally {
      forwarding = false;
    }
    const callback = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof stream.write;
};

if (!shared.functionLogListeners) {
  shared.functionLogListeners = listeners;
  routeRecords(process.stdout, (text) => console.log(text));
  routeRecords(process.stderr, (text) => console.error(text));
}

/**
 * The log records handlers in this process write from now until the current test ends (the in-process runtime's
 * functions, handlers called directly): for a test that provokes a failure and checks it is logged.
 */
export const recordFunctionLogs = (): {
  readonly records: FunctionLogRecord[];
  /** The records at `level` (ERROR, WARN, …). */
  at(level: string): FunctionLogRecord[];
} => {
  const records: FunctionLogRecord[] = [];
  const listener = (record: FunctionLogRecord) => {
    records.push(record);
  };
  listeners.add(listener);
  onTestFinished(() => {
    listeners.delete(listener);
  });
  return { records, at: (level) => records.filter((record) => record.level === level) };
};
