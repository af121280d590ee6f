import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPartnerClient, type FetchLike, PartnerApiError, paginate } from '../../sdk/src/index';
import { parseRetryAfter, retryDelayMs } from '../../sdk/src/retry';

// The SDK's own rules against a scripted fetch (no server): the request it sends, how it reads answers,
// when it retries and how long it waits, and how paginate follows cursors (D-16, D-19). The live server
// is in consumer.test.ts.

type Scripted = { status: number; body: unknown; headers?: Record<string, string> };

/** A fetch that answers from a script, in order, and records every URL it was called with. */
function scriptedFetch(...answers: (Scripted | Error)[]) {
  const urls: string[] = [];
  const headers: Record<string, string>[] = [];
  const fetch: FetchLike = async (url, init) => {
    urls.push(url);
    headers.push(init.headers);
    const answer = answers.shift();
    if (!answer) throw new Error(`unexpected call ${url}`);
    if (answer instanceof Error) throw answer;
    const all = new Map(Object.entries(answer.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    return {
      status: answer.status,
      headers: { get: (name) => all.get(name.toLowerCase()) ?? null },
      text: async () => JSON.stringify(answer.body),
    };
  };
  return { fetch, urls, headers };
}

const ok = (data: unknown, headers?: Record<string, string>): Scripted => ({
  status: 200,
  body: { result: { data: { status: 'SUCCESS', status_code: 200, message: 'OK', data } } },
  headers: { 'x-request-id': 'req-ok', ...headers },
});
const failed = (status: number, code: string, headers?: Record<string, string>): Scripted => ({
  status,
  body: {
    error: {
      message: 'The request cannot be processed.',
      code: -32000,
      data: { partner: { status: code, status_code: status, message: 'The request cannot be processed.' } },
    },
  },
  headers: { 'x-request-id': `req-${status}`, ...headers },
});
const page = (items: unknown[], number: number, has_next: boolean) => ({ items, page: number, limit: 2, has_next });
const inputOf = (url: string) => JSON.parse(new URL(url).searchParams.get('input') ?? 'null');

const BASE = 'https://partner.example.com/';
const client = (fetch: FetchLike, retries?: number) =>
  createPartnerClient({ baseUrl: BASE, apiKey: 'pk_live_x', fetch, ...(retries === undefined ? {} : { retries }) });

describe('a call', () => {
  it('is one GET of /partner/v1/trpc/<procedure> with the input as JSON and the key header, resolving to data', async () => {
    const script = scriptedFetch(ok(page([{ review_id: 'R1' }], 1, false)));
    const data = await client(script.fetch).reviews.list({
      brand_code: 'chicken-house',
      rating_min: 4.5,
      replied: false,
    });
    expect(data).toEqual(page([{ review_id: 'R1' }], 1, false));
    const url = new URL(script.urls[0] ?? '');
    expect(url.origin + url.pathname).toBe('https://partner.example.com/partner/v1/trpc/reviews.list');
    expect(url.searchParams.has('batch')).toBe(false);
    expect(inputOf(script.urls[0] ?? '')).toEqual({ brand_code: 'chicken-house', rating_min: 4.5, replied: false });
    expect(script.headers[0]).toMatchObject({ 'x-partner-api-key': 'pk_live_x' });
  });

  it('sends an empty input object when a list is called without parameters', async () => {
    const script = scriptedFetch(ok(page([], 1, false)));
    await client(script.fetch).brands.list();
    expect(inputOf(script.urls[0] ?? '')).toEqual({});
  });

  it('rejects with PartnerApiError carrying the partner code, the status and the x-request-id', async () => {
    const script = scriptedFetch(failed(404, 'PARTNER_API_BRAND_NOT_FOUND'));
    const error = await client(script.fetch)
      .shops.list({ brand_code: 'nope' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PartnerApiError);
    expect(error).toMatchObject({ code: 'PARTNER_API_BRAND_NOT_FOUND', status: 404, requestId: 'req-404' });
    expect(script.urls).toHaveLength(1);
  });

  it('names an answer that is not the API envelope PARTNER_SDK_INVALID_RESPONSE', async () => {
    const script = scriptedFetch({ status: 502, body: '<html>Bad gateway</html>' });
    const error = await client(script.fetch, 0)
      .brands.list()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'PARTNER_SDK_INVALID_RESPONSE', status: 502 });
  });
});

describe('retries (D-16)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits what Retry-After says after a 429, then calls again', async () => {
    const script = scriptedFetch(
      failed(429, 'PARTNER_API_RATE_LIMITED', { 'Retry-After': '3' }),
      ok(page([], 1, false)),
    );
    const call = client(script.fetch).brands.list();
    await vi.advanceTimersByTimeAsync(2_999);
    expect(script.urls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(300);
    expect(script.urls).toHaveLength(2);
    await expect(call).resolves.toEqual(page([], 1, false));
  });

  it('backs off exponentially on 5xx and network failures, then gives up with the last error', async () => {
    const script = scriptedFetch(
      new TypeError('fetch failed'),
      failed(503, 'PARTNER_API_INTERNAL_ERROR'),
      failed(500, 'PARTNER_API_INTERNAL_ERROR'),
    );
    const call = client(script.fetch)
      .brands.list()
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(script.urls).toHaveLength(3);
    expect(await call).toMatchObject({ code: 'PARTNER_API_INTERNAL_ERROR', status: 500, requestId: 'req-500' });
  });

  it('reports a server it never reached as PARTNER_SDK_NETWORK_ERROR with the cause', async () => {
    const cause = new TypeError('fetch failed');
    const script = scriptedFetch(cause);
    const error = await client(script.fetch, 0)
      .brands.list()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'PARTNER_SDK_NETWORK_ERROR', status: 0, cause });
  });

  it('does not retry with retries: 0, nor any 4xx but 429', async () => {
    const limited = scriptedFetch(failed(429, 'PARTNER_API_RATE_LIMITED', { 'Retry-After': '1' }));
    await expect(client(limited.fetch, 0).brands.list()).rejects.toMatchObject({ status: 429, retryAfter: 1 });
    const invalid = scriptedFetch(failed(400, 'PARTNER_API_INVALID_PARAMETER'));
    await expect(client(invalid.fetch).brands.list({ limit: 101 })).rejects.toMatchObject({ status: 400 });
    expect([limited.urls.length, invalid.urls.length]).toEqual([1, 1]);
  });

  it('does not wait longer than the cap: a Retry-After beyond it is thrown at once', async () => {
    const script = scriptedFetch(failed(429, 'PARTNER_API_RATE_LIMITED', { 'Retry-After': '60' }));
    const options = { baseUrl: BASE, apiKey: 'k', fetch: script.fetch, maxRetryDelayMs: 10_000 };
    await expect(createPartnerClient(options).brands.list()).rejects.toMatchObject({ retryAfter: 60 });
    expect(script.urls).toHaveLength(1);
  });
});

describe('the wait', () => {
  const policy = { retries: 5, baseDelayMs: 500, maxDelayMs: 30_000 };

  it('doubles per attempt with jitter in its upper half, and never exceeds the cap', () => {
    expect([0, 1, 2].map((attempt) => retryDelayMs(policy, attempt, undefined, () => 0))).toEqual([250, 500, 1000]);
    expect([0, 1, 2].map((attempt) => retryDelayMs(policy, attempt, undefined, () => 0.999))).toEqual([499, 999, 1999]);
    expect(retryDelayMs(policy, 4, undefined, () => 0.999)).toBeLessThanOrEqual(30_000);
    expect(retryDelayMs({ ...policy, maxDelayMs: 2_000 }, 4, undefined, () => 0.999)).toBeLessThanOrEqual(2_000);
  });

  it('is at least Retry-After, and none once the retries are spent', () => {
    expect(retryDelayMs(policy, 0, 2, () => 0)).toBe(2_000);
    expect(retryDelayMs(policy, 0, 2, () => 0.999)).toBeGreaterThanOrEqual(2_000);
    expect(retryDelayMs(policy, 5, 2)).toBeUndefined();
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:05 GMT', now)).toBe(5);
    expect([parseRetryAfter(null, now), parseRetryAfter('soon', now)]).toEqual([undefined, undefined]);
  });
});

describe('paginate', () => {
  const link = (cursor: string) => ({
    Link: `</partner/v1/brands/chicken-house/reviews?rating_min=4&limit=2&cursor=${cursor}>; rel="next"`,
  });

  it('follows the Link rel="next" cursor of the review list, keeping the filters and dropping page (D-19)', async () => {
    const script = scriptedFetch(
      ok(page(['r1', 'r2'], 1, true), link('c%2D1')),
      ok(page(['r3', 'r4'], 1, true), link('c-2')),
      ok(page(['r5'], 1, false)),
    );
    const items: unknown[] = [];
    const list = client(script.fetch).reviews.list;
    for await (const item of paginate(list, { brand_code: 'chicken-house', rating_min: 4, limit: 2, page: 1 })) {
      items.push(item);
    }
    expect(items).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(script.urls.map(inputOf)).toEqual([
      { brand_code: 'chicken-house', rating_min: 4, limit: 2, page: 1 },
      { brand_code: 'chicken-house', rating_min: 4, limit: 2, cursor: 'c-1' },
      { brand_code: 'chicken-house', rating_min: 4, limit: 2, cursor: 'c-2' },
    ]);
  });

  it('asks for page + 1 while has_next when no Link came (every other list, or a server without cursors)', async () => {
    const script = scriptedFetch(
      ok(page(['s1', 's2'], 1, true)),
      ok(page(['s3', 's4'], 2, true)),
      ok(page([], 3, false)),
    );
    const items: unknown[] = [];
    for await (const item of paginate(client(script.fetch).shops.list, { brand_code: 'chicken-house', limit: 2 })) {
      items.push(item);
    }
    expect(items).toEqual(['s1', 's2', 's3', 's4']);
    expect(script.urls.map((url) => inputOf(url).page)).toEqual([undefined, 2, 3]);
  });

  it('picks rel="next" among several links and stops calling when the loop breaks', async () => {
    const script = scriptedFetch(
      ok(page(['r1', 'r2'], 1, true), { Link: '</x?cursor=prev>; rel="prev", </x?cursor=nx>; rel="next"' }),
      ok(page(['r3'], 1, true), link('c-2')),
    );
    const items: unknown[] = [];
    for await (const item of paginate(client(script.fetch).reviews.list, { brand_code: 'b' })) {
      items.push(item);
      if (items.length === 3) break;
    }
    expect(script.urls.map((url) => inputOf(url).cursor)).toEqual([undefined, 'nx']);
  });
});
