/**
 * What `npm run mutate` mutates: the modules that guard users, each with the tests that cover it and the score it
 * must keep (docs/testing.md, "Mutation testing"). Each target runs only its own test files (mutation/vitest.config.ts):
 * narrower than the whole suite, so a run takes minutes, and named here rather than found by Stryker.
 */
export interface MutationTarget {
  /** Files (or `file:line-line` ranges) Stryker mutates. */
  readonly mutate: readonly string[];
  /** Test files that run against each mutant. */
  readonly tests: readonly string[];
  /** Mutation score (%) below which the run fails. */
  readonly bar: number;
  /**
   * Tests of those files left out of the run: slow ones whose code paths the faster tests reach too (a mutant
   * runs every test that reaches it, so one slow test can multiply a run's time).
   */
  readonly skip?: RegExp;
}

export const targets = {
  verifier: {
    mutate: ['lambdas/core/auth/verifier.ts'],
    tests: ['test/unit/core/auth/verifier.test.ts', 'test/unit/core/auth/rotation.test.ts'],
    bar: 90,
  },
  'address-policy': {
    mutate: ['lambdas/domain/webhooks/address-policy.ts'],
    tests: ['test/unit/webhooks/address-policy.test.ts', 'test/unit/webhooks/webhooks-rules.test.ts'],
    bar: 90,
  },
  idempotency: {
    mutate: ['lambdas/domain/idempotency.ts'],
    tests: ['test/unit/idempotency.test.ts'],
    bar: 90,
  },
  feed: {
    mutate: ['lambdas/domain/notifications/feed.ts'],
    tests: ['test/unit/notifications/feed.test.ts'],
    bar: 90,
    // 10,000 receivers and a 150-step random mix: minutes per mutant, and paging lives in core/paging.ts.
    skip: /10,000 unread items|under a random mix/,
  },
  'event-pattern': {
    mutate: ['local/eventbridge/event-pattern.ts'],
    tests: ['test/unit/local/eventbridge/event-pattern.test.ts'],
    bar: 85,
  },
  'route-access': {
    mutate: ['lambdas/core/http/access.ts'],
    tests: ['test/unit/core/http/access.test.ts'],
    bar: 90,
  },
  'channel-rules': {
    mutate: ['lambdas/domain/realtime/channel-access.ts', 'lambdas/domain/realtime/channel-names.ts'],
    tests: ['test/unit/realtime/channel-access.test.ts', 'test/unit/realtime/channel-names.test.ts'],
    bar: 90,
  },
  redrive: {
    mutate: ['lib/ops/redrive.ts'],
    tests: ['test/unit/redrive.test.ts'],
    bar: 85,
    // The command-line case runs the redrive in a child process, which no mutant reaches.
    skip: /npm run redrive -- --data DIR/,
  },
  'webhook-signer': {
    mutate: ['lambdas/domain/webhooks/signature.ts'],
    tests: ['test/unit/webhooks/webhooks-rules.test.ts'],
    bar: 90,
  },
} satisfies Record<string, MutationTarget>;

export type TargetName = keyof typeof targets;

export const isTargetName = (name: string): name is TargetName => Object.hasOwn(targets, name);
