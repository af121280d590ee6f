import type { RateLimitPolicy } from './limiter';

/** The counts of one identifier in the current and the previous fixed window. */
export type WindowCounts = { windowStart: number; current: number; previous: number };

/**
 * The sliding-window rule shared by the in-process store and the Redis one (the weighting of
 * @upstash/ratelimit's slidingWindow): the calls that count now are
 *   floor(previous × (1 − elapsed fraction of the current window)) + current.
 */
export function usedAt(policy: RateLimitPolicy, counts: WindowCounts, now: number): number {
  const fraction = (now - counts.windowStart) / policy.windowMs;
  return Math.floor(counts.previous * (1 - fraction)) + counts.current;
}

/**
 * The first instant a call is accepted again, solved from the rule above (floor(x) < n ⟺ x < n): in this
 * window once previous × (1 − f) < limit − current; if current alone fills the limit, in the next window
 * once current × (1 − f) < limit.
 */
export function freeAt(policy: RateLimitPolicy, counts: WindowCounts, now: number): number {
  const { limit, windowMs } = policy;
  if (usedAt(policy, counts, now) < limit) return now;
  if (counts.current < limit && counts.previous > 0) {
    const fraction = 1 - (limit - counts.current) / counts.previous;
    return Math.floor(counts.windowStart + fraction * windowMs) + 1;
  }
  const fraction = 1 - limit / counts.current;
  return Math.floor(counts.windowStart + windowMs + fraction * windowMs) + 1;
}
