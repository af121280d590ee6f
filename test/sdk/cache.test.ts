import { describe, expect, it } from 'vitest';
import { type CachedAnswer, createPartnerClient, type FetchLike, LruCache } from '../../sdk/src/index';
import { ok, type Scripted, scriptedFetch } from '../support/scripted-fetch';

// The opt-in conditional-request cache against a scripted fetch: a repeated call sends the ETag it was
// given, and a 304 (no body) resolves to the kept answer as the 200 did, with the 304's own headers.

const BASE = 'https://partner.example.com/';
const brands = { items: [{ brand_code: 'chicken-house' }], page: 1, limit: 20, has_next: false };
const notModified = (headers?: Record<string, string>): Scripted => ({
  status: 304,
  headers: { 'x-request-id': 'req-304', ...headers },
});
const client = (fetch: FetchLike, cache: boolean | LruCache | Map<string, CachedAnswer> = true, apiKey = 'k1') =>
  createPartnerClient({ baseUrl: BASE, apiKey, fetch, cache });

describe('the conditional cache', () => {
  it('sends the last ETag of the same request as If-None-Match and resolves a 304 to the kept data', async () => {
    const script = scriptedFetch(ok(brands, { ETag: 'W/"b1"' }), notModified({ ETag: 'W/"b1"' }));
    const sdk = client(script.fetch);
    expect(await sdk.brands.list({ limit: 20 })).toEqual(brands);
    expect(await sdk.brands.list({ limit: 20 })).toEqual(brands);
    expect(script.headers[0]).not.toHaveProperty('if-none-match');
    expect(script.headers[1]).toMatchObject({ 'if-none-match': 'W/"b1"' });
  });

  it("reports the 304's request id and rate limit in withResponse, and the 200's next cursor", async () => {
    const link = { Link: '</partner/v1/brands/b/reviews?limit=1&cursor=abc>; rel="next"' };
    const script = scriptedFetch(
      ok({ ...brands, has_next: true }, { ETag: 'W/"r1"', ...link }),
      notModified({ 'RateLimit-Limit': '100', 'RateLimit-Remaining': '97', 'RateLimit-Reset': '12' }),
    );
    const sdk = client(script.fetch);
    await sdk.reviews.list({ brand_code: 'b', limit: 1 });
    expect(await sdk.reviews.list({ brand_code: 'b', limit: 1 }).withResponse()).toEqual({
      data: { ...brands, has_next: true },
      requestId: 'req-304',
      rateLimit: { limit: 100, remaining: 97, resetSeconds: 12 },
      nextCursor: 'abc',
    });
  });

  it('tells onResponse the status 304', async () => {
    const script = scriptedFetch(ok(brands, { ETag: 'W/"b1"' }), notModified());
    const statuses: number[] = [];
    const sdk = createPartnerClient({
      baseUrl: BASE,
      apiKey: 'k',
      fetch: script.fetch,
      cache: true,
      onResponse: ({ status }) => statuses.push(status),
    });
    await sdk.brands.list();
    await sdk.brands.list();
    expect(statuses).toEqual([200, 304]);
  });

  it('hands out a fresh copy each time: changing one answer does not change the next', async () => {
    const script = scriptedFetch(ok(brands, { ETag: 'W/"b1"' }), notModified());
    const sdk = client(script.fetch);
    const first = await sdk.brands.list();
    first.items.length = 0;
    expect(await sdk.brands.list()).toEqual(brands);
  });

  it('keeps an answer per request: other parameters, another procedure or another key send no If-None-Match', async () => {
    const store = new Map<string, CachedAnswer>();
    const script = scriptedFetch(...Array.from({ length: 4 }, () => ok(brands, { ETag: 'W/"x"' })));
    await client(script.fetch, store).brands.list({ limit: 20 });
    await client(script.fetch, store).brands.list({ limit: 10 });
    await client(script.fetch, store).shops.list({ brand_code: 'b' });
    await client(script.fetch, store, 'k2').brands.list({ limit: 20 });
    expect(script.headers.map((headers) => headers['if-none-match'])).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(store.size).toBe(4);
    expect(JSON.stringify([...store.keys()])).not.toContain('k1');
  });

  it('replaces the kept answer when a 200 brings a new ETag, and keeps nothing without one', async () => {
    const changed = { ...brands, items: [] };
    const script = scriptedFetch(
      ok(brands, { ETag: 'W/"v1"' }),
      ok(changed, { ETag: 'W/"v2"' }),
      notModified(),
      ok(brands),
      ok(brands),
    );
    const sdk = client(script.fetch);
    await sdk.brands.list();
    expect(await sdk.brands.list()).toEqual(changed);
    expect(await sdk.brands.list()).toEqual(changed);
    expect(script.headers.slice(1, 3).map((headers) => headers['if-none-match'])).toEqual(['W/"v1"', 'W/"v2"']);
    await client(script.fetch, new LruCache()).shops.list({ brand_code: 'b' });
    expect(script.headers[3]).not.toHaveProperty('if-none-match');
  });

  it('is off by default: no If-None-Match is ever sent', async () => {
    const script = scriptedFetch(ok(brands, { ETag: 'W/"b1"' }), ok(brands, { ETag: 'W/"b1"' }));
    const sdk = createPartnerClient({ baseUrl: BASE, apiKey: 'k', fetch: script.fetch });
    await sdk.brands.list();
    await sdk.brands.list();
    expect(script.headers[1]).not.toHaveProperty('if-none-match');
  });

  it('a 304 the SDK did not ask for is not an answer', async () => {
    const script = scriptedFetch(notModified());
    const sdk = createPartnerClient({ baseUrl: BASE, apiKey: 'k', fetch: script.fetch, retries: 0 });
    await expect(sdk.brands.list()).rejects.toMatchObject({ code: 'PARTNER_SDK_INVALID_RESPONSE', status: 304 });
  });
});

describe('LruCache', () => {
  const answer = (etag: string): CachedAnswer => ({ etag, body: '{}', nextCursor: undefined });

  it('holds at most maxEntries, forgetting the one used least recently', () => {
    const cache = new LruCache(2);
    cache.set('a', answer('1'));
    cache.set('b', answer('2'));
    cache.get('a');
    cache.set('c', answer('3'));
    expect([cache.get('a')?.etag, cache.get('b'), cache.get('c')?.etag, cache.size]).toEqual(['1', undefined, '3', 2]);
  });

  it('holds 500 by default', () => {
    const cache = new LruCache();
    for (let index = 0; index < 501; index++) cache.set(String(index), answer(String(index)));
    expect([cache.size, cache.get('0'), cache.get('1')?.etag]).toEqual([500, undefined, '1']);
  });
});
