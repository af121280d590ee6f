import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createPartnerClient,
  type FetchLike,
  PartnerAbortError,
  PartnerApiError,
  paginate,
  SDK_VERSION,
} from '../../sdk/src/index';
import { parseRetryAfter, retryDelayMs } from '../../sdk/src/retry';
import { failed, inputOf, ok, scriptedFetch } from '../support/scripted-fetch';

// The SDK's own rules against a scripted fetch (no server): the request it sends, how it reads answers,
// when it retries and how long it waits, and how paginate follows cursors (D-16, D-19). The live server
// is in consumer.test.ts.

const page = (items: unknown[], number: number, has_next: boolean) => ({ items, page: number, limit: 2, has_next });

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

/** A fetch that never answers until its signal aborts (a server that accepted and went silent). */
function silentFetch() {
  const signals: { aborted: boolean }[] = [];
  const fetch: FetchLike = (_url, init) =>
    new Promise((_resolve, reject) => {
      signals.push(init.signal);
      init.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
  return { fetch, signals };
}

describe('cancel and timeouts', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('an abort during a request rejects at once with an AbortError, aborts the fetch and is never retried', async () => {
    const script = silentFetch();
    const controller = new AbortController();
    const call = client(script.fetch)
      .brands.list({}, { signal: controller.signal })
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort(new Error('user left'));
    const error = await call;
    expect(error).toBeInstanceOf(PartnerAbortError);
    expect(error).toMatchObject({ name: 'AbortError', code: 'PARTNER_SDK_ABORTED', status: 0 });
    expect((error as Error).cause).toEqual(new Error('user left'));
    expect(script.signals).toHaveLength(1);
    expect(script.signals[0]?.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(script.signals).toHaveLength(1);
  });

  it('an abort during a Retry-After wait rejects at once, without calling again', async () => {
    const script = scriptedFetch(failed(429, 'PARTNER_API_RATE_LIMITED', { 'Retry-After': '20' }));
    const controller = new AbortController();
    const call = client(script.fetch)
      .brands.list(undefined, { signal: controller.signal })
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort();
    expect(await call).toMatchObject({ name: 'AbortError', code: 'PARTNER_SDK_ABORTED' });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(script.urls).toHaveLength(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const script = scriptedFetch();
    await expect(client(script.fetch).brands.list({}, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(script.urls).toEqual([]);
  });

  it('a timeout fails the attempt with PARTNER_SDK_TIMEOUT and is retried like a network failure', async () => {
    const script = silentFetch();
    const sdk = createPartnerClient({ baseUrl: BASE, apiKey: 'k', fetch: script.fetch, timeoutMs: 1_000, retries: 1 });
    const call = sdk.brands.list().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(999);
    expect(script.signals).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(script.signals[0]?.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(script.signals).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await call).toMatchObject({ code: 'PARTNER_SDK_TIMEOUT', status: 0 });
  });

  it('a per-call timeoutMs overrides the client-wide one', async () => {
    const script = silentFetch();
    const call = client(script.fetch, 0)
      .brands.list({}, { timeoutMs: 50 })
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(50);
    expect(await call).toMatchObject({ code: 'PARTNER_SDK_TIMEOUT', message: expect.stringContaining('50 ms') });
  });

  it('paginate passes its signal to every page', async () => {
    const script = scriptedFetch(ok(page(['s1'], 1, true)));
    const controller = new AbortController();
    const items: unknown[] = [];
    const walk = (async () => {
      for await (const item of paginate(
        client(script.fetch).shops.list,
        { brand_code: 'b' },
        { signal: controller.signal },
      )) {
        items.push(item);
        controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(await walk).toMatchObject({ name: 'AbortError' });
    expect(items).toEqual(['s1']);
    expect(script.urls).toHaveLength(1);
  });
});

describe('withResponse', () => {
  it('gives the data with the request id, the rate limit and the next cursor', async () => {
    const script = scriptedFetch(
      ok(page(['r1'], 1, true), {
        'x-request-id': 'req-7',
        'RateLimit-Limit': '100',
        'RateLimit-Remaining': '41',
        'RateLimit-Reset': '17',
        Link: '</partner/v1/brands/b/reviews?limit=1&cursor=abc>; rel="next"',
      }),
    );
    const answer = await client(script.fetch).reviews.list({ brand_code: 'b', limit: 1 }).withResponse();
    expect(answer).toEqual({
      data: page(['r1'], 1, true),
      requestId: 'req-7',
      rateLimit: { limit: 100, remaining: 41, resetSeconds: 17 },
      nextCursor: 'abc',
    });
  });

  it('has no rate limit or cursor when the answer names none', async () => {
    const script = scriptedFetch(ok(page([], 1, false)));
    const answer = await client(script.fetch).brands.list().withResponse();
    expect(answer).toMatchObject({ rateLimit: undefined, nextCursor: undefined, requestId: 'req-ok' });
  });

  it('paginate resumes from a saved cursor, and onPage names the cursor after each finished page', async () => {
    const link = (cursor: string) => ({ Link: `</x?cursor=${cursor}>; rel="next"` });
    const script = scriptedFetch(ok(page(['r3', 'r4'], 1, true), link('c-4')), ok(page(['r5'], 1, false)));
    const seen: (string | undefined)[] = [];
    const items: unknown[] = [];
    const list = client(script.fetch).reviews.list;
    for await (const item of paginate(
      list,
      { brand_code: 'b', cursor: 'c-2' },
      { onPage: (p) => void seen.push(p.nextCursor) },
    )) {
      items.push(item);
    }
    expect(items).toEqual(['r3', 'r4', 'r5']);
    expect(seen).toEqual(['c-4', undefined]);
    expect(script.urls.map((url) => inputOf(url).cursor)).toEqual(['c-2', 'c-4']);
  });
});

describe('parameters', () => {
  it('a parameter the method does not take is a TypeError naming it, and nothing is sent', async () => {
    const script = scriptedFetch();
    const filters: Record<string, unknown> = { brand_code: 'b', rating_minimum: 4 };
    const error = await client(script.fetch)
      .reviews.list(filters as { brand_code: string })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain('"rating_minimum"');
    expect((error as Error).message).toContain('extraParams');
    expect(script.urls).toEqual([]);
  });

  it('extraParams sends a parameter newer than the SDK as given', async () => {
    const script = scriptedFetch(ok(page([], 1, false)));
    await client(script.fetch).reviews.list({ brand_code: 'b' }, { extraParams: { language: 'ko' } });
    expect(inputOf(script.urls[0] ?? '')).toEqual({ brand_code: 'b', language: 'ko' });
  });
});

describe('what a call tells', () => {
  it('an error message names the code, the status and the request id, String(error) too', async () => {
    const script = scriptedFetch(failed(404, 'PARTNER_API_BRAND_NOT_FOUND'));
    const error = await client(script.fetch)
      .shops.list({ brand_code: 'nope' })
      .catch((e: unknown) => e);
    expect(String(error)).toMatch(/^PartnerApiError: PARTNER_API_BRAND_NOT_FOUND \(HTTP 404\): .*req-404/);
  });

  it('a baseUrl that already ends in /partner/v1 is accepted', async () => {
    for (const baseUrl of ['https://partner.example.com/partner/v1', 'https://partner.example.com/api/partner/v1/']) {
      const script = scriptedFetch(ok(page([], 1, false)));
      await createPartnerClient({ baseUrl, apiKey: 'k', fetch: script.fetch }).brands.list();
      expect(new URL(script.urls[0] ?? '').pathname).toBe(
        `${new URL(baseUrl).pathname.replace(/\/partner\/v1\/?$/, '')}/partner/v1/trpc/brands.list`,
      );
    }
  });

  it('sends the user-agent with the package version, and a request id of the caller as x-request-id', async () => {
    const script = scriptedFetch(ok(page([], 1, false)));
    await client(script.fetch).brands.list({}, { requestId: 'nightly-export-42' });
    const version = JSON.parse(
      readFileSync(path.resolve(import.meta.dirname, '../../sdk/package.json'), 'utf8'),
    ).version;
    expect(SDK_VERSION).toBe(version);
    expect(script.headers[0]).toMatchObject({
      'user-agent': `partner-reporting-sdk/${version}`,
      'x-request-id': 'nightly-export-42',
    });
  });

  it('calls onRequest before and onResponse after every attempt, without the key', async () => {
    const script = scriptedFetch(failed(503, 'PARTNER_API_INTERNAL_ERROR'), ok(page([], 1, false)));
    const events: unknown[] = [];
    const sdk = createPartnerClient({
      baseUrl: BASE,
      apiKey: 'pk_live_secret',
      fetch: script.fetch,
      retryDelayMs: 1,
      onRequest: (event) => events.push(['request', event.procedure, event.attempt]),
      onResponse: (event) => events.push(['response', event.attempt, event.status, event.error?.code]),
    });
    await sdk.brands.list();
    expect(events).toEqual([
      ['request', 'brands.list', 0],
      ['response', 0, 503, 'PARTNER_API_INTERNAL_ERROR'],
      ['request', 'brands.list', 1],
      ['response', 1, 200, undefined],
    ]);
    expect(JSON.stringify(events)).not.toContain('pk_live_secret');
  });
});

describe('a custom fetch', () => {
  it('receives the runtime AbortSignal, so it can hand init to the global fetch as it is', async () => {
    const signals: unknown[] = [];
    const passOn: FetchLike = (url, init) => {
      signals.push(init.signal);
      return globalThis.fetch(url, init);
    };
    const sdk = createPartnerClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', fetch: passOn, retries: 0 });
    await expect(sdk.brands.list()).rejects.toMatchObject({ code: 'PARTNER_SDK_NETWORK_ERROR' });
    expect(signals[0]).toBeInstanceOf(AbortSignal);
  });
});
