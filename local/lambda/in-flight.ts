/**
 * The invocations a poller (an SQS event source mapping, a function's asynchronous queue) has running: at most
 * `max` at once, and on stop a grace period for them to settle.
 */
export class InFlightInvocations {
  private readonly running = new Set<Promise<void>>();
  private slotWaiter: (() => void) | undefined;

  constructor(private readonly max: number) {}

  /** Resolves once fewer than `max` run, or at once when `signal` is aborted. */
  async waitForSlot(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && this.running.size >= this.max) {
      await new Promise<void>((resolve) => {
        this.slotWaiter = resolve;
      });
      this.slotWaiter = undefined;
    }
  }

  track(run: Promise<void>): void {
    this.running.add(run);
    void run.finally(() => {
      this.running.delete(run);
      this.slotWaiter?.();
    });
  }

  /** Wakes a poller waiting for a slot (it is stopping). */
  wake(): void {
    this.slotWaiter?.();
  }

  /** Waits up to `graceMs` for the running invocations to settle. */
  async settle(graceMs: number): Promise<void> {
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.running]),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }
}
