import { describe, expect, it } from 'vitest';
import {
  CursorExpiredError,
  createPartnerClient,
  type FetchLike,
  PartnerApiError,
  type ReviewChange,
} from '../../sdk/src/index';
import { failed, inputOf, ok, scriptedFetch } from '../support/scripted-fetch';

// The review change feed as the SDK walks it, against a scripted fetch: pages chained by next_cursor until
// has_next is false, a cursor that only moves past a page once all its items were handed out, and a 410
// the caller can catch by type to start again without a cursor.

const BASE = 'https://partner.example.com/';
const client = (fetch: FetchLike) => createPartnerClient({ baseUrl: BASE, apiKey: 'k', fetch, retries: 0 });
const upsert = (review_id: string) => ({ review_id, change: 'UPSERT', review: { review_id } });
const deleted = (review_id: string) => ({ review_id, change: 'DELETE', review: null });
const changes = (items: unknown[], has_next: boolean, next_cursor: string) => ({
  items,
  limit: 2,
  has_next,
  next_cursor,
});

async function drain(feed: AsyncIterable<ReviewChange>) {
  const ids: string[] = [];
  for await (const item of feed) ids.push(`${item.change} ${item.review_id}`);
  return ids;
}

describe('client.reviews.changes', () => {
  it("walks every page through its next_cursor until has_next is false, and then its cursor is the last page's", async () => {
    const script = scriptedFetch(
      ok(changes([upsert('R1'), upsert('R2')], true, 'c1')),
      ok(changes([deleted('R3')], true, 'c2')),
      ok(changes([], false, 'c3')),
    );
    const feed = client(script.fetch).reviews.changes({ brand_code: 'b', limit: 2 });
    expect(feed.cursor).toBeUndefined();
    expect(await drain(feed)).toEqual(['UPSERT R1', 'UPSERT R2', 'DELETE R3']);
    expect(feed.cursor).toBe('c3');
    expect(new URL(script.urls[0] ?? '').pathname).toBe('/partner/v1/trpc/reviews.changes');
    expect(script.urls.map(inputOf)).toEqual([
      { brand_code: 'b', limit: 2 },
      { brand_code: 'b', limit: 2, cursor: 'c1' },
      { brand_code: 'b', limit: 2, cursor: 'c2' },
    ]);
  });

  it('moves its cursor past a page only once every item of the page has been handed out', async () => {
    const script = scriptedFetch(
      ok(changes([upsert('R1'), upsert('R2')], true, 'c1')),
      ok(changes([upsert('R3'), upsert('R4')], true, 'c2')),
    );
    const feed = client(script.fetch).reviews.changes({ brand_code: 'b', cursor: 'c0' });
    const seen: [string, string | undefined][] = [];
    for await (const item of feed) {
      seen.push([item.review_id, feed.cursor]);
      if (item.review_id === 'R4') break;
    }
    expect(seen).toEqual([
      ['R1', 'c0'],
      ['R2', 'c0'],
      ['R3', 'c1'],
      ['R4', 'c1'],
    ]);
    // A break on a page's last item may come before the item was handled: the page is not yet passed.
    expect(feed.cursor).toBe('c1');
  });

  it('resumes from a saved cursor, and walking the same feed again reads what came since', async () => {
    const script = scriptedFetch(
      ok(changes([upsert('R5')], false, 'c6')),
      ok(changes([], false, 'c6')),
      ok(changes([deleted('R5')], false, 'c7')),
    );
    const feed = client(script.fetch).reviews.changes({ brand_code: 'b', cursor: 'c5' });
    expect(await drain(feed)).toEqual(['UPSERT R5']);
    expect(await drain(feed)).toEqual([]);
    expect(feed.cursor).toBe('c6');
    expect(await drain(feed)).toEqual(['DELETE R5']);
    expect(script.urls.map((url) => inputOf(url).cursor)).toEqual(['c5', 'c6', 'c6']);
    expect(feed.cursor).toBe('c7');
  });

  it('nextPage reads one page with its answer, and moves the cursor to its next_cursor', async () => {
    const script = scriptedFetch(
      ok(changes([upsert('R1')], true, 'c1'), {
        'RateLimit-Limit': '100',
        'RateLimit-Remaining': '9',
        'RateLimit-Reset': '3',
      }),
      ok(changes([], false, 'c2')),
    );
    const feed = client(script.fetch).reviews.changes({ brand_code: 'b' });
    const first = await feed.nextPage().withResponse();
    expect(first).toMatchObject({ data: changes([upsert('R1')], true, 'c1'), rateLimit: { remaining: 9 } });
    expect(feed.cursor).toBe('c1');
    expect(await feed.nextPage()).toEqual(changes([], false, 'c2'));
    expect(script.urls.map((url) => inputOf(url).cursor)).toEqual([undefined, 'c1']);
    expect(feed.cursor).toBe('c2');
  });

  it('a 410 PARTNER_API_CURSOR_EXPIRED rejects with CursorExpiredError, a PartnerApiError, and keeps the cursor', async () => {
    const script = scriptedFetch(failed(410, 'PARTNER_API_CURSOR_EXPIRED'), ok(changes([upsert('R1')], false, 'c1')));
    const sdk = client(script.fetch);
    const feed = sdk.reviews.changes({ brand_code: 'b', cursor: 'old' });
    const error = await drain(feed).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CursorExpiredError);
    expect(error).toBeInstanceOf(PartnerApiError);
    expect(error).toMatchObject({ code: 'PARTNER_API_CURSOR_EXPIRED', status: 410, requestId: 'req-410' });
    expect(feed.cursor).toBe('old');
    // Start again without a cursor.
    expect(await drain(sdk.reviews.changes({ brand_code: 'b' }))).toEqual(['UPSERT R1']);
    expect(script.urls.map((url) => inputOf(url).cursor)).toEqual(['old', undefined]);
  });

  it('with the conditional cache, a poll that finds nothing new is answered 304 from the kept page', async () => {
    const script = scriptedFetch(ok(changes([], false, 'c6'), { ETag: 'W/"p6"' }), {
      status: 304,
      headers: { ETag: 'W/"p6"' },
    });
    const sdk = createPartnerClient({ baseUrl: BASE, apiKey: 'k', fetch: script.fetch, cache: true });
    const feed = sdk.reviews.changes({ brand_code: 'b', cursor: 'c6' });
    expect(await drain(feed)).toEqual([]);
    expect(await drain(feed)).toEqual([]);
    expect(script.headers[1]).toMatchObject({ 'if-none-match': 'W/"p6"' });
    expect(feed.cursor).toBe('c6');
  });

  it('sends nothing until it is walked, and refuses a parameter it does not take', async () => {
    const script = scriptedFetch();
    const feed = client(script.fetch).reviews.changes({ brand_code: 'b', page: 2 } as { brand_code: string });
    expect(script.urls).toEqual([]);
    await expect(drain(feed)).rejects.toBeInstanceOf(TypeError);
    expect(script.urls).toEqual([]);
  });
});
