import type { Logger } from '../logger';
import { metrics } from '../metrics';
import type { RateLimitDecision, RateLimiter } from './sliding-window';

/**
 * D-14: the shared store is asked first, for at most `timeoutMs`; when it is slow or unreachable the call
 * is judged by the in-process limiter of the same policy (each instance still enforces the limit on its
 * own), and the failure is logged, once per outage at warn and each time at debug. The answer is always a
 * real decision of one of the two, so the headers never advertise made-up numbers.
 * - A call the store counts after its answer was abandoned is refunded, so no call is counted twice and
 *   a call refused locally is not counted in the shared budget.
 * - After a failure the store is left alone for `cooldownMs` (a circuit breaker), so an outage does not
 *   add the timeout to every call; the next call after it tries the store again.
 */
export class FallbackLimiter implements RateLimiter {
  private degraded = false;
  private skipUntil = 0;

  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly log: Logger,
    private readonly timeoutMs = 250,
    private readonly cooldownMs = 5_000,
    private readonly clock: () => number = Date.now,
  ) {}

  async limit(identifier: string, calls = 1): Promise<RateLimitDecision> {
    if (this.clock() < this.skipUntil) {
      metrics?.storeFallbacks.inc({ reason: 'cooldown' });
      return this.local.limit(identifier, calls);
    }
    const asked = this.shared.limit(identifier, calls);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      // Past the deadline, I/O is polled once more before giving up (setImmediate runs after the poll
      // phase): an answer that arrived in time while this process was busy (a long synchronous task, say)
      // is used, instead of judging locally and leaving the store alone for the cooldown.
      const expire = () => reject(new Error(`rate-limit store slower than ${this.timeoutMs} ms`));
      timer = setTimeout(() => setImmediate(expire), this.timeoutMs);
    });
    try {
      const decision = await Promise.race([asked, timeout]);
      if (this.degraded) {
        this.degraded = false;
        this.log.info('rate-limit store answering again');
      }
      return decision;
    } catch (error) {
      metrics?.storeFallbacks.inc({ reason: 'unavailable' });
      this.skipUntil = this.clock() + this.cooldownMs;
      // If the abandoned call still lands and was counted, give it back.
      asked
        .then(
          (late) => (late.success && this.shared.refund ? this.shared.refund(identifier, calls, late) : undefined),
          () => undefined,
        )
        .catch((refundError: unknown) => this.log.debug({ error: refundError }, 'rate-limit refund failed'));
      if (!this.degraded) {
        this.degraded = true;
        this.log.warn({ error }, 'rate-limit store unavailable; limiting in process');
      } else {
        this.log.debug({ error }, 'rate-limit store still unavailable');
      }
      return this.local.limit(identifier, calls);
    } finally {
      clearTimeout(timer);
    }
  }
}
