import { describe, expect, it } from 'vitest';
import { MemorySlidingWindow, rateLimitHeaders } from '../server/trpc/ratelimit/sliding-window';

const policy = { name: 'default', limit: 100, windowMs: 60_000 };

function limiterAt(start: number) {
  let now = start;
  const limiter = new MemorySlidingWindow(policy, () => now);
  return { limiter, advance: (ms: number) => (now += ms), now: () => now };
}

// D-14: 100 calls per sliding minute per key, weighted like @upstash/ratelimit's slidingWindow.
describe('in-process sliding window', () => {
  it('allows 100 calls in a minute and refuses the 101st, counting remaining down', async () => {
    const { limiter } = limiterAt(0);
    const decisions = [];
    for (let i = 0; i < 101; i++) decisions.push(await limiter.limit('k'));
    expect(decisions.slice(0, 100).every((d) => d.success)).toBe(true);
    expect(decisions[0]?.remaining).toBe(99);
    expect(decisions[99]?.remaining).toBe(0);
    expect(decisions[100]).toMatchObject({ success: false, remaining: 0 });
  });

  it('keeps identifiers apart', async () => {
    const { limiter } = limiterAt(0);
    for (let i = 0; i < 100; i++) await limiter.limit('a');
    expect((await limiter.limit('a')).success).toBe(false);
    expect((await limiter.limit('b')).success).toBe(true);
  });

  it('slides: the previous window weighs less as the current one advances', async () => {
    const { limiter, advance } = limiterAt(0);
    for (let i = 0; i < 100; i++) await limiter.limit('k');
    advance(60_000 + 30_000); // half-way through the next window: floor(100 × 0.5) = 50 still count
    const allowed = [];
    for (let i = 0; i < 60; i++) allowed.push((await limiter.limit('k')).success);
    expect(allowed.filter(Boolean)).toHaveLength(50);
  });

  it('says exactly when a refused call would be accepted, and that moment accepts it', async () => {
    const { limiter, advance, now } = limiterAt(0);
    for (let i = 0; i < 100; i++) await limiter.limit('k');
    advance(10_000);
    const refused = await limiter.limit('k');
    expect(refused.success).toBe(false);
    const retryAt = refused.retryAt ?? 0;
    expect(retryAt).toBeGreaterThan(60_000); // the current window alone holds the limit
    advance(retryAt - now() - 1);
    expect((await limiter.limit('k')).success).toBe(false);
    advance(1);
    expect((await limiter.limit('k')).success).toBe(true);
  });

  it('a refused call is not counted', async () => {
    const { limiter, advance } = limiterAt(0);
    for (let i = 0; i < 100; i++) await limiter.limit('k');
    for (let i = 0; i < 50; i++) await limiter.limit('k');
    advance(60_000 * 2); // two windows later nothing remains, whatever was refused
    expect((await limiter.limit('k')).remaining).toBe(99);
  });

  it('the call that spends the budget already knows when the next one is accepted', async () => {
    const { limiter, advance } = limiterAt(5_000);
    for (let i = 0; i < 99; i++) await limiter.limit('k');
    const last = await limiter.limit('k');
    expect(last).toMatchObject({ success: true, remaining: 0 });
    const refused = await limiter.limit('k');
    expect(last.retryAt).toBe(refused.retryAt);
    advance((refused.retryAt ?? 0) - 5_000);
    expect((await limiter.limit('k')).success).toBe(true);
  });

  it('counts a batch as its calls, or refuses it whole and counts nothing (D-20)', async () => {
    const { limiter } = limiterAt(0);
    expect(await limiter.limit('k', 10)).toMatchObject({ success: true, remaining: 90 });
    for (let i = 0; i < 85; i++) await limiter.limit('k');
    const refused = await limiter.limit('k', 10);
    expect(refused).toMatchObject({ success: false, remaining: 5 });
    // Nothing of the refused batch was counted: the five calls left still pass, one by one.
    for (let i = 0; i < 5; i++) expect((await limiter.limit('k')).success).toBe(true);
    expect((await limiter.limit('k')).success).toBe(false);
  });

  it('gives back refunded calls', async () => {
    const { limiter } = limiterAt(0);
    await limiter.limit('k', 3);
    await limiter.refund('k', 2);
    expect((await limiter.limit('k')).remaining).toBe(98);
  });
});

describe('rate-limit headers (D-14)', () => {
  it('advertise the policy and the decision, and Retry-After only when refused', async () => {
    const { limiter } = limiterAt(15_000);
    const ok = rateLimitHeaders(policy, await limiter.limit('k'), 15_000);
    expect(ok).toEqual({
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '99',
      'RateLimit-Reset': '45',
      'RateLimit-Policy': '"default";q=100;w=60',
    });
    for (let i = 0; i < 98; i++) await limiter.limit('k');
    const spent = rateLimitHeaders(policy, await limiter.limit('k'), 15_000);
    const refused = rateLimitHeaders(policy, await limiter.limit('k'), 15_000);
    expect(spent['RateLimit-Reset']).toBe(refused['RateLimit-Reset']);
    expect(spent['Retry-After']).toBeUndefined();
    expect(refused['Retry-After']).toBe(refused['RateLimit-Reset']);
    expect(Number(refused['Retry-After'])).toBeGreaterThanOrEqual(45);
  });
});
