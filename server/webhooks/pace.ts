import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The most attempts an instance starts per second (D-28): a bulk change is delivered at a steady rate, and
 * the calls the same instance and database serve keep their share of the machine. Shared by every
 * endpoint's loop; a batch waits for the room its attempts take.
 */
export class DeliveryPace {
  /** When the next attempt may start, on `clock`'s scale (ms). */
  private nextAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly perSecond: number,
    private readonly clock: () => number = () => performance.now(),
    private readonly wait: (ms: number, signal: AbortSignal) => Promise<unknown> = (ms, signal) =>
      sleep(ms, undefined, { signal }),
  ) {}

  /**
   * Resolves once `count` attempts may start (at once, when the instance was idle), or when `signal` aborts,
   * with how long it waited (ms).
   */
  async take(count: number, signal: AbortSignal): Promise<number> {
    const now = this.clock();
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + (count * 1_000) / this.perSecond;
    if (at > now) await this.wait(at - now, signal).catch(() => undefined);
    return at - now;
  }
}
