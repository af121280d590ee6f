import type { Logger } from '../../logger';
import { metrics } from '../metrics';
import type { RateLimitDecision, RateLimiter } from './sliding-window';

/** D-14: the shared store, else for `cooldownMs` the in-process limiter; a late count of the store is refunded. */
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
      // I/O is polled once more before giving up: an answer that came in time while this process was busy counts.
      const expire = () => reject(new Error(`rate-limit store slower than ${this.timeoutMs} ms`));
      timer = setTimeout(() => setImmediate(expire), this.timeoutMs);
    });
    try {
      const decision = await Promise.race([asked, timeout]);
      if (this.degraded) {
        this.degraded = false;
        this.log.info({ store: this.shared.at }, 'rate-limit store answering again');
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
        this.log.warn({ store: this.shared.at, error }, 'rate-limit store unavailable; limiting in process');
      } else {
        this.log.debug({ error }, 'rate-limit store still unavailable');
      }
      return this.local.limit(identifier, calls);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Gives calls back to the store that counted them (a shared decision names its window), waiting `timeoutMs`. */
  async refund(identifier: string, calls = 1, counted?: RateLimitDecision): Promise<void> {
    if (counted?.window === undefined) return this.local.refund?.(identifier, calls, counted);
    const given = this.shared.refund?.(identifier, calls, counted).catch((error: unknown) => {
      this.log.debug({ error }, 'rate-limit refund failed');
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.timeoutMs);
    });
    await Promise.race([given, timeout]).finally(() => clearTimeout(timer));
  }
}
