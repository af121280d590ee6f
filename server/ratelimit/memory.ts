import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from './limiter';
import { freeAt, usedAt } from './window';

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
    const { limit, windowMs } = this.policy;
    const now = this.clock();
    this.roll(Math.floor(now / windowMs) * windowMs);
    const counts = {
      windowStart: this.windowStart,
      current: this.current.get(identifier) ?? 0,
      previous: this.previous.get(identifier) ?? 0,
    };
    const reset = this.windowStart + windowMs;
    const used = usedAt(this.policy, counts, now);
    if (used + calls > limit) {
      // A spent budget says exactly when one call passes again; a batch larger than what remains is
      // told the window's end (the headers use `reset` while calls remain).
      if (used >= limit)
        return { success: false, limit, remaining: 0, reset, retryAt: freeAt(this.policy, counts, now) };
      return { success: false, limit, remaining: limit - used, reset };
    }
    counts.current += calls;
    this.current.set(identifier, counts.current);
    const remaining = limit - used - calls;
    // The last call of the budget also says when the next one will be accepted.
    return remaining > 0
      ? { success: true, limit, remaining, reset }
      : { success: true, limit, remaining, reset, retryAt: freeAt(this.policy, counts, now) };
  }

  private roll(windowStart: number) {
    if (windowStart === this.windowStart) return;
    this.previous = windowStart === this.windowStart + this.policy.windowMs ? this.current : new Map();
    this.current = new Map();
    this.windowStart = windowStart;
  }
}
