/** The reliability suite's long form (`npm run test:reliability`); `npm test` runs the short one. */
export const LONG = process.env.RELIABILITY_LONG === '1';

/**
 * A test's figures (requests, errors, kills, latencies). The long form prints them, for docs/reliability.md;
 * `npm test` prints them only if the test fails, like the rest of its console output (vitest.config.ts).
 */
export const reportFigures = (line: string): void => {
  if (LONG) process.stdout.write(`${line}\n`);
  else console.info(line);
};
