/** The error a promise rejects with; fails the test if it resolves. */
export const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as Error & { $metadata?: { httpStatusCode?: number } };
  }
  throw new Error('expected the call to fail');
};

/** Polls `check` until it returns a value other than undefined/false (the test's timeout bounds it). */
export const waitUntil = async <T>(check: () => T | undefined | false, intervalMs = 10): Promise<T> => {
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
};
