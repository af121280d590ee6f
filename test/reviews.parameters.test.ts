import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectErrorBody } from './support/errors';
import { startServer, testServices } from './support/services';

// partner guide § Errors (review list 400 cases) and D-11, as partners send them over REST.
let server: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  server = await startServer(testServices((await openTestDatabase()).db));
});

const path = `/partner/v1/brands/${DEMO_BRAND}/reviews`;
const get = (query: string) => server.request(`${path}?${query}`, { key: DEMO_KEYS.active });

describe('review list parameters', () => {
  it.each([
    'from=2026-01-01&to=2026-01-31',
    'from=2026-01-31&to=2026-01-31',
    'to=2099-12-31', // a future end is fine
    'rating_min=0&rating_max=0',
    'rating_min=4.5',
    'rating_min=1&rating_max=5',
    'replied=true&critical=false&handled=true',
    'platform=NAVER',
    'platform_shop_id=10482913',
    `keyword=${encodeURIComponent('가'.repeat(50))}`, // 50 Hangul characters (150 bytes) is the limit
    'keyword=100%25',
    'keyword=&replied=', // empty counts as absent
  ])('accepts %s', async (query) => {
    const response = await get(query);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'SUCCESS' });
  });

  it.each([
    'from=2026-02-30', // not a calendar day
    'from=2026-1-1',
    'from=20260101',
    'to=2026-01-01T00:00:00',
    'from=2026-02-01&to=2026-01-31', // from later than to
    'rating_min=5.5',
    'rating_min=-1',
    'rating_max=abc',
    'rating_min=4.5.1',
    'rating_min=4&rating_max=3',
    'replied=TRUE',
    'replied=1',
    'critical=yes',
    'handled=false&handled=true', // given twice
    'platform=baemin', // exact uppercase
    'platform=UBER',
    `keyword=${encodeURIComponent('가'.repeat(51))}`,
    `keyword=${'a'.repeat(51)}`,
    'keyword=a&keyword=b',
    'page=0',
    'limit=101',
    'from=0001-01-01', // before 1900: outside what the database and KST rules handle
    'to=1899-12-31',
    'keyword=a%00b', // NUL cannot be compared in PostgreSQL text
    'platform_shop_id=%00',
  ])('rejects %s with 400 PARTNER_API_INVALID_PARAMETER', async (query) => {
    expectErrorBody(await get(query), 'PARTNER_API_INVALID_PARAMETER');
  });

  it('judges parameters before the brand (D-13) and the brand before the review (partner guide § Errors)', async () => {
    expectErrorBody(
      await server.request('/partner/v1/brands/burger-town/reviews?from=bad', { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
    expectErrorBody(
      await server.request('/partner/v1/brands/burger-town/reviews/R000000001', { key: DEMO_KEYS.active }),
      'PARTNER_API_BRAND_NOT_FOUND',
    );
    expectErrorBody(
      await server.request(`/partner/v1/brands/${DEMO_BRAND}/reviews/R999999999`, { key: DEMO_KEYS.active }),
      'PARTNER_API_REVIEW_NOT_FOUND',
    );
  });

  it('returns the same items over REST as through the tRPC transport', async () => {
    const query = { brand_code: DEMO_BRAND, critical: true, rating_min: 1, keyword: '치킨', limit: 50 };
    const rest = await get('critical=true&rating_min=1&keyword=%EC%B9%98%ED%82%A8&limit=50');
    const trpc = await server.request(
      `/partner/v1/trpc/reviews.list?input=${encodeURIComponent(JSON.stringify(query))}`,
      {
        key: DEMO_KEYS.active,
      },
    );
    expect((trpc.body as { result: { data: unknown } }).result.data).toEqual(rest.body);
  });
});
