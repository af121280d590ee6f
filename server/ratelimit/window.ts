import type { RateLimitDecision, RateLimitPolicy } from './limiter';

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

/**
 * The decision for `calls` calls against the counts before them (D-14): admitted whole if they fit what
 * the window leaves, else refused whole and counted nothing. `admitted` is the store's own verdict when
 * the store judged (the Redis script applies the same rule); `now` is on the clock of `counts`.
 * - A spent budget says exactly when one call passes again (`retryAt`); a batch larger than what remains
 *   is told the window's end (the headers use `reset` while calls remain).
 * - The last call of the budget also says when the next one will be accepted.
 */
export function decide(
  policy: RateLimitPolicy,
  before: WindowCounts,
  now: number,
  calls: number,
  admitted = usedAt(policy, before, now) + calls <= policy.limit,
): RateLimitDecision {
  const { limit, windowMs } = policy;
  const reset = before.windowStart + windowMs;
  const counts = admitted ? { ...before, current: before.current + calls } : before;
  const remaining = Math.max(0, limit - usedAt(policy, counts, now));
  if (remaining > 0) return { success: admitted, limit, remaining, reset };
  return { success: admitted, limit, remaining, reset, retryAt: freeAt(policy, counts, now) };
}
