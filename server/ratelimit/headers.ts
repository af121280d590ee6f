import type { RateLimitDecision, RateLimitPolicy } from './limiter';

/**
 * The headers of D-14 (IETF draft RateLimit fields). Reset is whole seconds until the window frees a
 * call: for a refused call the exact moment one is accepted again (also Retry-After), otherwise the
 * window's end.
 */
export function rateLimitHeaders(
  policy: RateLimitPolicy,
  decision: RateLimitDecision,
  now: number,
): Record<string, string> {
  const until = decision.success ? decision.reset : (decision.retryAt ?? decision.reset);
  const seconds = Math.max(1, Math.ceil((until - now) / 1000));
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(seconds),
    'RateLimit-Policy': `"${policy.name}";q=${policy.limit};w=${Math.round(policy.windowMs / 1000)}`,
  };
  if (!decision.success) headers['Retry-After'] = String(seconds);
  return headers;
}
