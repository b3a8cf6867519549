import { AwsServiceError } from '../aws-http';

/**
 * `at(yyyy-mm-ddThh:mm:ss)` of EventBridge Scheduler: a wall-clock time in ScheduleExpressionTimezone
 * (UTC when absent), to the second. Returns the epoch milliseconds it denotes.
 */

const AT = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;

const invalid = (message: string): AwsServiceError => new AwsServiceError('ValidationException', message);

/** Offset (ms) of `timeZone` from UTC at the instant `epochMs`. */
const zoneOffsetMs = (epochMs: number, timeZone: string): number => {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(epochMs));
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  const asUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  return asUtc - Math.floor(epochMs / 1000) * 1000;
};

export const parseAtExpression = (expression: string, timeZone: string | undefined): number => {
  const match = AT.exec(expression);
  if (!match) throw invalid(`Invalid Schedule Expression ${expression}: expected at(yyyy-mm-ddThh:mm:ss).`);
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const wallClock = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(wallClock);
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw invalid(`Invalid Schedule Expression ${expression}: not a calendar date and time.`);
  }
  if (timeZone === undefined || timeZone === 'UTC') return wallClock;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw invalid(`Invalid ScheduleExpressionTimezone ${timeZone}.`);
  }
  // Two passes settle the offset across a DST change.
  let instant = wallClock - zoneOffsetMs(wallClock, timeZone);
  instant = wallClock - zoneOffsetMs(instant, timeZone);
  return instant;
};
