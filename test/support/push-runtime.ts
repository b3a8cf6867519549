import { afterAll, beforeAll } from 'vitest';
import { pushSettingName } from '../../common/env';
import type { Delivery } from '../../local/delivery';
import { type ExpoStandIn, startExpoStandIn } from '../../local/push/expo-stand-in';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { eventually } from './api';
import { queueIdle } from './queues';
import { type Runtime, startTestRuntime } from './runtime';

/** A test file's local runtime whose Expo pushes go to a stand-in, and a number unique to the run. */
export interface PushRuntime {
  readonly runtime: Runtime;
  readonly expo: ExpoStandIn;
  readonly run: number;
  /** The pushes the stand-in received for one device token. */
  pushesTo(pushToken: string): ReturnType<ExpoStandIn['received']>;
}

export interface PushRuntimeOptions {
  /** The stand-ins' time scale while the file runs (NOTIFY_LOCAL_TIME_SCALE), restored after it. */
  readonly timeScale?: string;
  /** AWS-like delivery of the test's own making (default: the runtime's). */
  readonly delivery?: Delivery;
}

/** Starts the runtime and the Expo stand-in before the file's tests and stops them after. */
export const usePushRuntime = (options: PushRuntimeOptions = {}): PushRuntime => {
  let runtime: Runtime | undefined;
  let expo: ExpoStandIn | undefined;
  let run = 0;
  const savedScale = process.env[TIME_SCALE_ENV];
  beforeAll(async () => {
    if (options.timeScale !== undefined) process.env[TIME_SCALE_ENV] = options.timeScale;
    expo = await startExpoStandIn();
    runtime = await startTestRuntime({
      env: { [pushSettingName('EXPO_URL')]: expo.url },
      ...(options.delivery ? { delivery: options.delivery } : {}),
    });
    run = Date.now();
  }, 120_000);
  afterAll(async () => {
    await runtime?.stop();
    await expo?.close();
    if (savedScale === undefined) delete process.env[TIME_SCALE_ENV];
    else process.env[TIME_SCALE_ENV] = savedScale;
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the runtime is started in beforeAll');
    return value;
  };
  return {
    get runtime() {
      return started(runtime);
    },
    get expo() {
      return started(expo);
    },
    get run() {
      return run;
    },
    pushesTo: (pushToken) =>
      started(expo)
        .received()
        .filter((push) => push.token === pushToken),
  };
};

/**
 * Waits until the fan-out and push queues are idle: what was sent has been delivered (or failed). Throws when they
 * are not within a minute, naming the busy queues.
 */
export const deliveryIdle = async (): Promise<void> => {
  const busy = async () =>
    (
      await Promise.all(['fanout', 'push'].map(async (queue) => ((await queueIdle(queue)) ? [] : [queue])))
    ).flat();
  const left = await eventually(busy, (queues) => queues.length === 0, 60_000);
  if (left.length > 0) throw new Error(`not idle after 60 s: ${left.join(', ')}`);
};
