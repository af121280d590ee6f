// The sliding window of D-14: the policies, the rule both stores apply, the in-process store, the headers.

/** What a limiter answers for one call. Times are milliseconds since the epoch. */
export type RateLimitDecision = {
  success: boolean;
  limit: number;
  remaining: number;
  /** When the current window ends (the counts roll over). */
  reset: number;
  /** When the next call would be accepted, once the budget is spent (refused, or remaining 0). */
  retryAt?: number;
  /** The store's window the calls were counted in, where a refund gives them back (the shared store). */
  window?: number;
};

/** A limiter: in process (MemorySlidingWindow) or shared by every instance on Redis (redis.ts). */
export interface RateLimiter {
  /** Counts `calls` calls (default 1) if they all fit, else counts nothing (a tRPC batch is one decision, D-20). */
  limit(identifier: string, calls?: number): Promise<RateLimitDecision>;
  /** Gives back counted calls, never below zero (`counted` is the decision that counted them). */
  refund?(identifier: string, calls?: number, counted?: RateLimitDecision): Promise<void>;
  /** The same store judging another policy, with counts of its own (the shared store). */
  withPolicy?(policy: RateLimitPolicy): RateLimiter;
  /** Where a shared store is (host:port, never credentials), for the lines that say it failed. */
  readonly at?: string;
}

export type RateLimitPolicy = { name: string; limit: number; windowMs: number };

export function policies(perMinute: number) {
  return {
    /** Every call that reaches an endpoint with a valid key, per key. */
    perKey: { name: 'default', limit: perMinute, windowMs: 60_000 },
    /** Calls refused by the key check, per client address: bounds key guessing. */
    perAddressRefused: { name: 'refused-keys', limit: 300, windowMs: 60_000 },
    /** 304s per key that give their call back to perKey (D-27); past it a 304 counts like any call. */
    perKeyNotModified: { name: 'not-modified', limit: 1_000, windowMs: 60_000 },
  } satisfies Record<string, RateLimitPolicy>;
}

/** The counts of one identifier in the current and the previous fixed window. */
export type WindowCounts = { windowStart: number; current: number; previous: number };

/** The rule (@upstash/ratelimit's weighting): floor(previous × (1 − elapsed fraction of the window)) + current. */
export function usedAt(policy: RateLimitPolicy, counts: WindowCounts, now: number): number {
  const fraction = (now - counts.windowStart) / policy.windowMs;
  return Math.floor(counts.previous * (1 - fraction)) + counts.current;
}

/** The first instant a call is accepted again, solved from the rule (floor(x) < n ⟺ x < n). */
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

/** `calls` calls are admitted or refused whole; `admitted` is the store's verdict when the store judged. */
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

/** The sliding window in memory: two maps of counts, swapped when the window rolls, so a call costs O(1). */
export class MemorySlidingWindow implements RateLimiter {
  private windowStart = Number.NEGATIVE_INFINITY;
  private current = new Map<string, number>();
  private previous = new Map<string, number>();

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Synchronous inside, so the check and the count are one step however many calls run at once. */
  async limit(identifier: string, calls = 1): Promise<RateLimitDecision> {
    const now = this.clock();
    const windowStart = Math.floor(now / this.policy.windowMs) * this.policy.windowMs;
    if (windowStart !== this.windowStart) {
      this.previous = windowStart === this.windowStart + this.policy.windowMs ? this.current : new Map();
      this.current = new Map();
      this.windowStart = windowStart;
    }
    const current = this.current.get(identifier) ?? 0;
    const before = { windowStart, current, previous: this.previous.get(identifier) ?? 0 };
    const decision = decide(this.policy, before, now, calls);
    if (decision.success) this.current.set(identifier, current + calls);
    return decision;
  }

  async refund(identifier: string, calls = 1): Promise<void> {
    const current = this.current.get(identifier);
    if (current !== undefined) this.current.set(identifier, Math.max(0, current - calls));
  }
}

/** The RateLimit headers (IETF draft); with the budget spent, Reset says when the next call is accepted. */
export function rateLimitHeaders(policy: RateLimitPolicy, decision: RateLimitDecision, now: number) {
  const until = decision.remaining === 0 ? (decision.retryAt ?? decision.reset) : decision.reset;
  const seconds = secondsUntil(until, now);
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(seconds),
    'RateLimit-Policy': `"${policy.name}";q=${policy.limit};w=${Math.round(policy.windowMs / 1000)}`,
  };
  if (!decision.success) headers['Retry-After'] = String(seconds);
  return headers;
}

/** Whole seconds until an instant, at least 1 (a header of 0 would invite an immediate retry). */
export function secondsUntil(instant: number, now: number): number {
  return Math.max(1, Math.ceil((instant - now) / 1000));
}
