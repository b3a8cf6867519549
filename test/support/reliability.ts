import { AWS_LIKE_ODDS, awsLikeDelivery, type Chooser, type Delivery } from '../../local/delivery';

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

/**
 * AWS-like delivery with SQS handing the messages of `queueId` to two consumers at once far more often: `odds` of
 * its receives get a copy (both carry the same message id), for tests of what a worker does with such copies.
 */
export const copiesOnQueue = (seed: number, queueId: string, odds: number): Delivery => {
  const base = awsLikeDelivery(seed);
  return {
    ...base,
    chooser: (name): Chooser => {
      const chooser = base.chooser(name);
      if (name !== `sqs:${queueId}`) return chooser;
      return {
        ...chooser,
        chance: (p) => chooser.chance(p === AWS_LIKE_ODDS.duplicateWhileHeld ? odds : p),
      };
    },
  };
};
