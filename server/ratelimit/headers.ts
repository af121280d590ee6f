import type { RateLimitDecision, RateLimitPolicy } from './limiter';

/**
 * The headers of D-14 (IETF draft RateLimit fields). RateLimit-Reset is whole seconds until the window
 * frees a call: when the budget is spent (remaining 0, refused or not) the exact moment the next call is
 * accepted, which a 429 repeats as Retry-After; otherwise the end of the current window.
 */
export function rateLimitHeaders(
  policy: RateLimitPolicy,
  decision: RateLimitDecision,
  now: number,
): Record<string, string> {
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
