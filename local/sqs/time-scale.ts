/**
 * Time scaling of the local stand-ins: every SQS/Lambda duration (visibility timeouts, DelaySeconds,
 * batching windows) and the period of recurring schedules is multiplied by it, so tests and demos need not
 * wait for AWS's minutes. An explicit `timeScale` option wins; else NOTIFY_LOCAL_TIME_SCALE; else 1.
 */
export const TIME_SCALE_ENV = 'NOTIFY_LOCAL_TIME_SCALE';

export const resolveTimeScale = (explicit: number | undefined, owner: string): number => {
  const raw = explicit ?? (process.env[TIME_SCALE_ENV] ? Number(process.env[TIME_SCALE_ENV]) : 1);
  if (!(typeof raw === 'number' && Number.isFinite(raw) && raw > 0)) {
    throw new Error(
      `${owner}: the time scale must be a positive number (${TIME_SCALE_ENV}), got ${String(raw)}`,
    );
  }
  return raw;
};
