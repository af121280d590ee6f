import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from './limiter';
import { decide } from './window';

/**
 * A sliding-window limiter in process memory, by the same rule as the Redis store (window.ts). Counts live
 * in two maps, the current window's and the previous one's, swapped when the window rolls, so a call costs
 * O(1) and memory holds only identifiers seen in the last two windows. (rate-limiter-flexible's memory
 * limiter is a fixed window, hence this small class.)
 */
export class MemorySlidingWindow implements RateLimiter {
  private windowStart = Number.NEGATIVE_INFINITY;
  private current = new Map<string, number>();
  private previous = new Map<string, number>();

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Synchronous inside, so the check and the count are one step, however many calls run at once (D-14). */
  async limit(identifier: string, calls = 1): Promise<RateLimitDecision> {
    return this.take(identifier, calls);
  }

  async refund(identifier: string, calls = 1): Promise<void> {
    const current = this.current.get(identifier);
    if (current !== undefined) this.current.set(identifier, Math.max(0, current - calls));
  }

  private take(identifier: string, calls: number): RateLimitDecision {
    const now = this.clock();
    this.roll(Math.floor(now / this.policy.windowMs) * this.policy.windowMs);
    const before = {
      windowStart: this.windowStart,
      current: this.current.get(identifier) ?? 0,
      previous: this.previous.get(identifier) ?? 0,
    };
    const decision = decide(this.policy, before, now, calls);
    if (decision.success) this.current.set(identifier, before.current + calls);
    return decision;
  }

  private roll(windowStart: number) {
    if (windowStart === this.windowStart) return;
    this.previous = windowStart === this.windowStart + this.policy.windowMs ? this.current : new Map();
    this.current = new Map();
    this.windowStart = windowStart;
  }
}
