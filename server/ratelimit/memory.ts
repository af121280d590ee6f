import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from './limiter';

type Counter = { windowStart: number; current: number; previous: number };

/**
 * A sliding-window counter in process memory, weighted like @upstash/ratelimit's slidingWindow so the
 * shared store and this one agree: a call is allowed while
 *   floor(previous × (1 − elapsed fraction of the current window)) + current < limit.
 * (rate-limiter-flexible's memory limiter is a fixed window, hence this small class; see
 * ../shared/notes/data-and-ratelimit.md.)
 */
export class MemorySlidingWindow implements RateLimiter {
  private readonly counters = new Map<string, Counter>();

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly clock: () => number = Date.now,
  ) {}

  async limit(identifier: string): Promise<RateLimitDecision> {
    return this.take(identifier, true);
  }

  /** The decision a call would get now, without counting it. */
  async peek(identifier: string): Promise<RateLimitDecision> {
    return this.take(identifier, false);
  }

  private take(identifier: string, count: boolean): RateLimitDecision {
    const { limit, windowMs } = this.policy;
    const now = this.clock();
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const counter = this.roll(identifier, windowStart);
    const fraction = (now - windowStart) / windowMs;
    const used = Math.floor(counter.previous * (1 - fraction)) + counter.current;
    const reset = windowStart + windowMs;
    if (used >= limit) {
      return { success: false, limit, remaining: 0, reset, retryAt: this.freeAt(counter, windowStart) };
    }
    if (count) counter.current += 1;
    return { success: true, limit, remaining: limit - used - (count ? 1 : 0), reset };
  }

  private roll(identifier: string, windowStart: number): Counter {
    const { windowMs } = this.policy;
    let counter = this.counters.get(identifier);
    if (!counter) {
      if (this.counters.size > 50_000) this.sweep(windowStart);
      counter = { windowStart, current: 0, previous: 0 };
      this.counters.set(identifier, counter);
    } else if (counter.windowStart !== windowStart) {
      counter.previous = counter.windowStart === windowStart - windowMs ? counter.current : 0;
      counter.current = 0;
      counter.windowStart = windowStart;
    }
    return counter;
  }

  /**
   * The first instant a call is allowed again, solved from the weighting above (floor(x) < n ⟺ x < n):
   * in this window once previous × (1 − f) < limit − current; if current alone fills the limit, in the
   * next window once current × (1 − f) < limit.
   */
  private freeAt(counter: Counter, windowStart: number): number {
    const { limit, windowMs } = this.policy;
    if (counter.current < limit && counter.previous > 0) {
      const fraction = 1 - (limit - counter.current) / counter.previous;
      return Math.floor(windowStart + fraction * windowMs) + 1;
    }
    const fraction = 1 - limit / counter.current;
    return Math.floor(windowStart + windowMs + fraction * windowMs) + 1;
  }

  private sweep(windowStart: number) {
    for (const [key, counter] of this.counters) {
      if (counter.windowStart < windowStart - this.policy.windowMs) this.counters.delete(key);
    }
  }
}
