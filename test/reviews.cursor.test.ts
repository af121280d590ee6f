import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { kstDayStart } from '../db/kst';
import { reviews } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { createCaller } from '../routers';
import { createRequestContext } from '../server/trpc/context';
import type { Services } from '../server/trpc/services';
import { DRIVER, openTestDatabase } from './support/database';
import { expectErrorBody, expectPartnerError } from './support/errors';
import { type BrandFixture, createBrandWithReviews, type ReviewSpec } from './support/factories';
import { walk } from './support/pages';
import { startServer, testServices } from './support/services';

// D-19 cursor pages of the review list, through both transports: the `Link: rel="next"` header, the items
// after the cursor's position (no skip, no repeat when reviews arrive between pages), and the 400 cases.

const FIRST = kstDayStart('2026-05-01').getTime();
const WORDS = ['맛있어요', '짜요', 'crispy & hot', '100% 만족', ''];
// 47 reviews over a few hours, with many written in the same second (ties broken by review_id, D-9).
const SPECS: ReviewSpec[] = Array.from({ length: 47 }, (_, index) => ({
  shop: index % 2,
  writtenAt: new Date(FIRST + Math.floor(index / 3) * 600_000),
  content: WORDS[index % WORDS.length] ?? '',
  rating: (index % 5) + 1,
  menus: index % 4 === 0 ? ['맛있는 치킨'] : null,
}));

let database: DatabaseHandle;
let services: Services;
let fixture: BrandFixture;
let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  database = await openTestDatabase();
  fixture = await createBrandWithReviews(database.db, {
    critical: [1, 2],
    platforms: ['BAEMIN', 'NAVER'],
    reviews: SPECS,
  });
  // Hundreds of calls in seconds: the limit is not under test here.
  services = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1000000' });
  server = await startServer(services);
});

type Input = Omit<Parameters<ReturnType<typeof createCaller>['reviews']['list']>[0], 'brand_code'>;
type ListData = { items: { review_id: string; date: string }[]; page: number; has_next: boolean };

/** One call through createCaller: its data and the Link header it set (D-19: ctx.responseHeaders). */
async function viaCaller(input: Input, brandCode = fixture.brandCode) {
  const ctx = createRequestContext(services, { apiKey: DEMO_KEYS.active });
  const { data } = await createCaller(ctx).reviews.list({ brand_code: brandCode, ...input });
  return { data: data as ListData, link: ctx.responseHeaders.Link };
}

/** One REST call of a query string: its data and its Link header. */
async function viaRest(query: string, brandCode = fixture.brandCode) {
  return viaRestTarget(`/partner/v1/brands/${brandCode}/reviews?${query}`);
}

async function viaRestTarget(target: string) {
  const response = await server.request(target, { key: DEMO_KEYS.active });
  expect(response.status).toBe(200);
  return {
    data: (response.body as unknown as { data: ListData }).data,
    link: response.headers.get('link') ?? undefined,
  };
}

/** The URL of a `Link: <…>; rel="next"` header, and its parameters decoded. */
function nextOf(link: string | undefined) {
  const match = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
  if (!match?.[1]) throw new Error(`no rel="next" link in ${link}`);
  const target = match[1];
  return { target, params: new URL(target, 'http://x').searchParams };
}

/** Every review_id of a list walked by cursor through the REST Link headers, and the pages it took. */
async function walkRestByLink(query: string) {
  const codes: string[] = [];
  let answer = await viaRest(query);
  let pages = 1;
  for (;;) {
    codes.push(...answer.data.items.map((item) => item.review_id));
    if (!answer.data.has_next) {
      expect(answer.link).toBeUndefined();
      return { codes, pages };
    }
    answer = await viaRestTarget(nextOf(answer.link).target);
    pages++;
    expect(pages, 'a cursor that does not advance would loop').toBeLessThan(100);
  }
}

/** Every review_id walked by cursor through createCaller. */
async function walkCallerByCursor(input: Input) {
  const codes: string[] = [];
  let answer = await viaCaller(input);
  for (;;) {
    codes.push(...answer.data.items.map((item) => item.review_id));
    if (!answer.data.has_next) {
      expect(answer.link).toBeUndefined();
      return codes;
    }
    const cursor = nextOf(answer.link).params.get('cursor') ?? '';
    answer = await viaCaller({ ...input, cursor });
    expect(answer.data.page).toBe(1);
    expect(codes.length, 'a cursor that does not advance would loop').toBeLessThan(SPECS.length + 2);
  }
}

async function walkByPage(input: Input, limit: number) {
  const items = await walk((page) => viaCaller({ ...input, page, limit }), limit);
  return items.map((item) => item.review_id);
}

describe(`cursor pages (D-19) on ${DRIVER}`, () => {
  it.each<[Input, number]>([
    [{}, 5],
    [{}, 1],
    [{ keyword: '맛있' }, 4],
    [{ platform: 'NAVER', rating_min: 2 }, 3],
    [{ from: '2026-05-01', to: '2026-05-01', critical: false }, 7],
  ])(
    'walks %j by cursor (limit %i) through the same items as page/limit, on both transports',
    async (filters, limit) => {
      const byPage = await walkByPage(filters, limit);
      expect(byPage.length).toBeGreaterThan(limit); // more than one page
      expect(await walkCallerByCursor({ ...filters, limit })).toEqual(byPage);
      const query = new URLSearchParams(
        Object.entries({ ...filters, limit }).map(([name, value]): [string, string] => [name, String(value)]),
      ).toString();
      const rest = await walkRestByLink(query);
      expect(rest.codes).toEqual(byPage);
      expect(rest.pages).toBe(Math.ceil(byPage.length / limit));
    },
  );

  it('neither skips nor repeats an item when a newer review arrives between two pages', async () => {
    const before = await walkByPage({}, 100);
    const first = await viaCaller({ limit: 10 });
    const firstNext = nextOf(first.link);
    const shop = fixture.shops[0];
    if (!shop) throw new Error('fixture has no shop');
    await database.db.insert(reviews).values({
      reviewCode: `${fixture.reviewCodes[0]}x`,
      brandId: fixture.brandId,
      shopId: shop.id,
      writtenAt: new Date(FIRST + 86_400_000),
      content: 'newest',
    });
    // page 2 by offset now repeats the last item of page 1; the cursor page starts right after it
    const byOffset = await viaCaller({ limit: 10, page: 2 });
    expect(byOffset.data.items[0]?.review_id).toBe(first.data.items.at(-1)?.review_id);

    const rest: string[] = [];
    let answer = await viaRestTarget(firstNext.target);
    for (;;) {
      rest.push(...answer.data.items.map((item) => item.review_id));
      if (!answer.data.has_next) break;
      answer = await viaRestTarget(nextOf(answer.link).target);
    }
    expect([...first.data.items.map((item) => item.review_id), ...rest]).toEqual(before);
  });

  it('sends no Link on the last page, nor when nothing matches', async () => {
    const total = (await walkByPage({}, 100)).length;
    expect((await viaCaller({ limit: total })).link).toBeUndefined();
    expect((await viaRest(`limit=${total}`)).link).toBeUndefined();
    expect((await viaRest('keyword=nothing-like-this')).link).toBeUndefined();
    expect((await viaCaller({ limit: total - 1 })).link).toBeDefined();
  });

  it('keeps every filter and the limit in the Link, percent-encoded', async () => {
    const { link } = await viaRest(`keyword=${encodeURIComponent('맛있')}&rating_max=4.5&replied=false&limit=2`);
    const { target, params } = nextOf(link);
    expect(target).toMatch(
      new RegExp(
        `^/partner/v1/brands/${fixture.brandCode}/reviews\\?rating_max=4.5&replied=false&keyword=%EB%A7%9B%EC%9E%88&limit=2&cursor=[A-Za-z0-9_-]+$`,
      ),
    );
    expect(params.get('keyword')).toBe('맛있');

    const special = nextOf((await viaCaller({ keyword: 'crispy & hot', limit: 2 })).link);
    expect(special.target).toContain('keyword=crispy%20%26%20hot&limit=2&');
    expect(special.params.get('keyword')).toBe('crispy & hot');
  });

  it('answers the same body shape with a cursor, page as given (1)', async () => {
    const first = await viaCaller({ limit: 3 });
    const cursor = nextOf(first.link).params.get('cursor') ?? '';
    const second = await viaCaller({ limit: 3, cursor, page: 1 });
    expect(Object.keys(second.data)).toEqual(['items', 'page', 'limit', 'has_next']);
    expect(second.data.page).toBe(1);
  });
});

describe('cursor refusals (D-19: 400 PARTNER_API_INVALID_PARAMETER)', () => {
  let cursor: string;
  beforeAll(async () => {
    cursor = nextOf((await viaCaller({ keyword: '맛있', limit: 2 })).link).params.get('cursor') ?? '';
  });

  const tampered = () => {
    const payload = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    return Buffer.from(JSON.stringify([payload[0], payload[1], 'AAAAAAAAAAAAAAAA'])).toString('base64url');
  };

  const K = `keyword=${encodeURIComponent('맛있')}`;
  const cases: [string, () => { input: Input; query: string; brand?: string }][] = [
    ['with page 2', () => ({ input: { keyword: '맛있', cursor, page: 2 }, query: `${K}&page=2&cursor=${cursor}` })],
    [
      'under another keyword',
      () => ({ input: { keyword: '짜요', cursor }, query: `keyword=%EC%A7%9C%EC%9A%94&cursor=${cursor}` }),
    ],
    ['without its keyword', () => ({ input: { cursor }, query: `cursor=${cursor}` })],
    [
      'with a filter added',
      () => ({ input: { keyword: '맛있', replied: true, cursor }, query: `${K}&replied=true&cursor=${cursor}` }),
    ],
    [
      'under another brand',
      () => ({ input: { keyword: '맛있', cursor }, query: `${K}&cursor=${cursor}`, brand: 'chicken-house' }),
    ],
    ['not base64url', () => ({ input: { cursor: 'abc=' }, query: 'cursor=abc%3D' })],
    ['not a cursor', () => ({ input: { cursor: 'aGVsbG8' }, query: 'cursor=aGVsbG8' })],
    [
      'truncated',
      () => ({ input: { keyword: '맛있', cursor: cursor.slice(0, -3) }, query: `${K}&cursor=${cursor.slice(0, -3)}` }),
    ],
    [
      'with a forged fingerprint',
      () => ({ input: { keyword: '맛있', cursor: tampered() }, query: `${K}&cursor=${tampered()}` }),
    ],
    [
      'repeated',
      () => ({
        input: { keyword: '맛있', cursor: [cursor, cursor] as unknown as string },
        query: `${K}&cursor=${cursor}&cursor=${cursor}`,
      }),
    ],
  ];

  it.each(cases)('refuses a cursor %s, on both transports', async (_name, make) => {
    const { input, query, brand = fixture.brandCode } = make();
    const caller = createCaller(createRequestContext(services, { apiKey: DEMO_KEYS.active }));
    await expectPartnerError(caller.reviews.list({ brand_code: brand, ...input }), 'PARTNER_API_INVALID_PARAMETER');
    const response = await server.request(`/partner/v1/brands/${brand}/reviews?${query}`, { key: DEMO_KEYS.active });
    expectErrorBody(response, 'PARTNER_API_INVALID_PARAMETER');
  });

  it('accepts the same cursor under its own filters', async () => {
    const { data } = await viaCaller({ keyword: '맛있', cursor });
    expect(data.items.length).toBeGreaterThan(0);
    expect((await viaRest(`keyword=${encodeURIComponent('맛있')}&cursor=${cursor}`)).data.items).toEqual(data.items);
  });
});
