/** When to call again, and how long to wait first. */
export type RetryPolicy = {
  /** Calls after the first; 0 turns retrying off. */
  retries: number;
  /** The first backoff; each further one doubles it. */
  baseDelayMs: number;
  /** No wait is longer: a Retry-After beyond it is not waited for, the error is thrown instead. */
  maxDelayMs: number;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 2, baseDelayMs: 500, maxDelayMs: 30_000 };

/**
 * No answer (status 0: a network failure), 429 (rate limited, D-14) and any 5xx may pass on a later try;
 * every other answer is final. Every call is a GET, so repeating one is safe.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 0 || status === 429 || status >= 500;
}

/**
 * The wait before retry number `attempt` (0 for the first retry), or undefined when not to retry.
 * A Retry-After is honoured as the least wait, with a little jitter on top so that clients refused
 * together do not return together; without one, exponential backoff with "equal jitter" (half fixed,
 * half random), capped.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterSeconds: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.retries) return undefined;
  if (retryAfterSeconds !== undefined) {
    const asked = retryAfterSeconds * 1000;
    if (asked > policy.maxDelayMs) return undefined;
    return Math.min(policy.maxDelayMs, asked + Math.floor(random() * Math.min(250, asked / 10 + 50)));
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(backoff / 2 + random() * (backoff / 2));
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined if absent or bad. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
