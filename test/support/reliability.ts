/** The reliability suite's long form (`npm run test:reliability`); `npm test` runs the short one. */
export const LONG = process.env.RELIABILITY_LONG === '1';
