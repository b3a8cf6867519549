/**
 * How long past an invocation's deadline what it may hold stays held: a claim or a lease taken by a handling
 * lasts until the invocation's deadline plus 5 s of clock slack (lambdas/core/message-handling.ts); a second
 * more. What an invocation was given (a queue message, an event) comes back no earlier than its deadline plus
 * this once the invocation died: on AWS the queue's visibility timeout (six times the function timeout) and
 * Lambda's retry waits (a minute and more) are longer still, and a time scale shortens those, not the deadline.
 */
export const HOLDS_PAST_DEADLINE_MS = 6_000;

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
