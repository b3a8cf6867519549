import { createHash, randomInt } from 'node:crypto';

/**
 * AWS-like delivery: the ways AWS is less kind than an in-memory stand-in, on by default so that code relying
 * on kindness fails locally (docs/local-standins.md "AWS-like delivery"). SQS standard queues sometimes
 * deliver a message twice (again after its delete, or to a second consumer while the first holds it), out of
 * order, and receive fewer messages than are available; EventBridge delivers to rule targets a little after
 * PutEvents / StartReplay answer; API Gateway sometimes sends no `$disconnect`; flexible schedules fire
 * anywhere in their window. Every choice comes from a seeded generator: the seed is printed, and setting it
 * again repeats the same choices (the interleaving of concurrent work can still differ from run to run).
 */

export const DELIVERY_ENV = 'NOTIFY_LOCAL_DELIVERY';
export const SEED_ENV = 'NOTIFY_LOCAL_SEED';

export type DeliveryMode = 'aws' | 'exact';

/** How often each unkindness happens. Small, so a test suite sees each many times without slowing down. */
export const AWS_LIKE_ODDS = {
  /** A deleted message comes back once more (SQS: a copy on a server that missed the delete). */
  duplicateAfterDelete: 0.05,
  /** A received message stays visible to a second consumer for a moment (a copy received twice at once). */
  duplicateWhileHeld: 0.03,
  /** The messages a receive sees come in shuffled order. */
  reorder: 0.3,
  /** A receive returns fewer messages than it could (SQS samples a subset of its servers). */
  partialBatch: 0.25,
  /** `$disconnect` is not delivered after a close (API Gateway: best effort). */
  lostDisconnect: 0.1,
  /** Longest delay of a rule target's delivery after PutEvents, and of a duplicate's return (ms). */
  maxDelayMs: 50,
} as const;

/** One stream of choices; streams of different names are independent, so one stand-in's draws never shift another's. */
export interface Chooser {
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** An integer in [min, max]. */
  between(min: number, max: number): number;
  /** The same items, reordered. */
  shuffled<T>(items: readonly T[]): T[];
}

export interface Delivery {
  readonly mode: DeliveryMode;
  readonly seed: number;
  /** The choices of one stand-in part (e.g. `sqs:<queue>`); `exact` mode never chooses anything unkind. */
  chooser(name: string): Chooser;
}

/** sfc32: a small, fast generator with good statistics; enough for test choices, not for cryptography. */
const sfc32 = (a: number, b: number, c: number, d: number): (() => number) => {
  return () => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
};

const seededChooser = (seed: number, name: string): Chooser => {
  const digest = createHash('sha256').update(`${seed}:${name}`).digest();
  const next = sfc32(
    digest.readUInt32LE(0),
    digest.readUInt32LE(4),
    digest.readUInt32LE(8),
    digest.readUInt32LE(12),
  );
  return {
    chance: (p) => p > 0 && next() < p,
    between: (min, max) => min + Math.floor(next() * (max - min + 1)),
    shuffled: <T>(items: readonly T[]) => {
      const copy = [...items];
      for (let index = copy.length - 1; index > 0; index -= 1) {
        const other = Math.floor(next() * (index + 1));
        [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
      }
      return copy;
    },
  };
};

const EXACT_CHOOSER: Chooser = {
  chance: () => false,
  between: (min) => min,
  shuffled: (items) => [...items],
};

export const exactDelivery = (): Delivery => ({ mode: 'exact', seed: 0, chooser: () => EXACT_CHOOSER });

export const awsLikeDelivery = (seed: number): Delivery => ({
  mode: 'aws',
  seed,
  chooser: (name) => seededChooser(seed, name),
});

/** A new seed: small enough to type back. */
export const newSeed = (): number => randomInt(1, 1_000_000_000);

/**
 * The delivery in effect: explicit options win, then NOTIFY_LOCAL_DELIVERY (`aws` or `exact`) and
 * NOTIFY_LOCAL_SEED, then AWS-like with a new seed.
 */
export const resolveDelivery = (
  explicit: { readonly mode?: DeliveryMode; readonly seed?: number } = {},
  env: NodeJS.ProcessEnv = process.env,
): Delivery => {
  const mode = explicit.mode ?? (env[DELIVERY_ENV] || 'aws');
  if (mode !== 'aws' && mode !== 'exact') {
    throw new Error(`${DELIVERY_ENV} must be "aws" or "exact", got "${mode}"`);
  }
  if (mode === 'exact') return exactDelivery();
  const rawSeed = explicit.seed ?? (env[SEED_ENV] ? Number(env[SEED_ENV]) : undefined);
  if (rawSeed !== undefined && !(Number.isSafeInteger(rawSeed) && rawSeed >= 0)) {
    throw new Error(`${SEED_ENV} must be a non-negative integer, got "${String(rawSeed)}"`);
  }
  return awsLikeDelivery(rawSeed ?? newSeed());
};

/** The line `npm start` and the test runtime print, so a run can be repeated. */
export const describeDelivery = (delivery: Delivery): string =>
  delivery.mode === 'aws'
    ? `AWS-like delivery (duplicates, reordering, partial batches, asynchronous events, lost $disconnect), seed ${delivery.seed}: repeat with --seed ${delivery.seed} or ${SEED_ENV}=${delivery.seed}; turn off with --exact-delivery or ${DELIVERY_ENV}=exact`
    : 'exact delivery (each message once, in order, events delivered before PutEvents answers, $disconnect always)';
