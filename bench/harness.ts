import { availableParallelism, loadavg } from 'node:os';
import { wiring } from '../lib/wiring';
import { metering as lambdaMetering } from '../local/lambda/runner';
import { functionMemoryMb, type Usage, UsageMeter, usageBetween } from '../local/metering';
import { type Runtime, startRuntime } from '../local/runtime';

export interface MeteredRuntime {
  readonly runtime: Runtime;
  readonly meter: UsageMeter;
  /** Waits until no queue holds a message and no counter moved for a while: the work has finished. */
  settle(maxMs?: number): Promise<void>;
  /** Runs `work`, settles (waiting at most `settleMs` for delayed messages), and returns the usage it caused. */
  measure(work: () => Promise<void>, settleMs?: number): Promise<Usage>;
  api(path: string, token: string, init?: RequestInit): Promise<Response>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The 1-minute load average, and the cores it is shared by: the Lambda durations measured here grow with it. */
export const machineLoad = (): { loadAverage1m: number; cores: number } => ({
  loadAverage1m: Number((loadavg()[0] ?? 0).toFixed(2)),
  cores: availableParallelism(),
});

/**
 * Waits, at most `maxMs`, until the 1-minute load average is under the number of cores (nothing but this run
 * competing for them), so the durations measured next are this run's own; returns the load it ends with.
 */
export const waitForQuiet = async (maxMs: number): Promise<number> => {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const { loadAverage1m, cores } = machineLoad();
    if (loadAverage1m < cores || Date.now() >= deadline) return loadAverage1m;
    await sleep(10_000);
  }
};

/** The local runtime with every billable operation metered (gateways, DynamoDB proxy, runner, stand-ins). */
export const startMeteredRuntime = async (): Promise<MeteredRuntime> => {
  const meter = new UsageMeter(functionMemoryMb(wiring));
  const runtime = await startRuntime({
    port: 0,
    quiet: true,
    // Costs are measured on the ordinary path: no duplicate deliveries adding invocations at random.
    delivery: { mode: 'exact' },
    meter: {
      gateway: meter,
      dynamoDbCall: (call) => meter.dynamoDbCall(call),
    },
  });
  const { sqs, eventBridge, scheduler, lambda } = runtime.standIns;
  meter.attach({
    lambda: () => lambdaMetering.snapshot(),
    sqs: () => sqs.counters(),
    eventBridge: () => eventBridge.counters(),
    scheduler: () => scheduler.counters(),
  });

  const activity = (): string => {
    const usage = meter.snapshot();
    const invocations = Object.values(usage.lambda).reduce((total, fn) => total + fn.invocations, 0);
    const dynamo = Object.values(usage.dynamoDb).reduce(
      (total, table) => total + table.readRequests + table.writeRequests,
      0,
    );
    // Lambda's asynchronous queues of the bus functions count as work in flight too.
    const queued = wiring.queues.reduce((total, queue) => {
      const stats = sqs.stats(queue.id);
      return (
        total +
        stats.ApproximateNumberOfMessages +
        stats.ApproximateNumberOfMessagesNotVisible +
        stats.ApproximateNumberOfMessagesDelayed
      );
    }, lambda.asyncBacklog());
    return `${invocations}/${dynamo}/${usage.wsMessagesOut}/${queued === 0 ? 'empty' : queued}`;
  };

  const settle = async (maxMs = 30_000) => {
    const deadline = Date.now() + maxMs;
    let previous = activity();
    let quietSince = Date.now();
    while (Date.now() < deadline) {
      await sleep(40);
      const now = activity();
      if (now !== previous) {
        previous = now;
        quietSince = Date.now();
      } else if (now.endsWith('/empty') && Date.now() - quietSince >= 150) {
        return;
      }
    }
    throw new Error(`the runtime did not settle within ${maxMs} ms (${previous})`);
  };

  return {
    runtime,
    meter,
    settle,
    measure: async (work, settleMs) => {
      await settle();
      const before = meter.snapshot();
      await work();
      await settle(settleMs);
      return usageBetween(before, meter.snapshot());
    },
    api: (path, token, init = {}) =>
      fetch(`${runtime.httpUrl}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
      }),
  };
};
