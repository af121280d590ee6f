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

/** A store-agnostic limiter: in process (memory.ts) or shared by every instance on Redis (redis.ts), D-14. */
export interface RateLimiter {
  /**
   * Counts `calls` calls (default 1) if they all fit the remaining budget, else counts nothing and
   * refuses (a tRPC batch is admitted or refused whole, D-20).
   */
  limit(identifier: string, calls?: number): Promise<RateLimitDecision>;
  /**
   * Gives back counted calls, never below zero: a shared store's answer that came too late to be used
   * (`counted` is that answer), or a call that should not have counted.
   */
  refund?(identifier: string, calls?: number, counted?: RateLimitDecision): Promise<void>;
}

/** The policies of the service, by name (D-14). */
export type RateLimitPolicy = { name: string; limit: number; windowMs: number };

export function policies(perMinute: number) {
  return {
    /** Every call that reaches an endpoint with a valid key, per key. */
    perKey: { name: 'default', limit: perMinute, windowMs: 60_000 },
    /** Calls refused by the key check, per client address: bounds key guessing (D-14). */
    perAddressRefused: { name: 'refused-keys', limit: 300, windowMs: 60_000 },
  } satisfies Record<string, RateLimitPolicy>;
}
