import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDailyAggregate } from '../db/aggregate';
import type { DatabaseHandle } from '../db/client';
import { addDays, kstDayStart, kstToday } from '../db/kst';
import { reviewStatsDaily, reviews, shops } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { NOW, openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectErrorBody, expectPartnerError } from './support/errors';
import { byteOrder, walk } from './support/pages';
import { callerFor, startServer, testServices } from './support/services';

// Review statistics (partner guide § Review statistics), with D-6 (the daily aggregate), D-9 (ties) and D-11.
// The template was aggregated with NOW, the clock of these callers.

const TODAY = kstToday(NOW);
const YESTERDAY = addDays(TODAY, -1);
const LINKED_TODAY = '10999001'; // chicken-house, BAEMIN, linked at 00:00 KST today (D-6)
const PATH = `/partner/v1/brands/${DEMO_BRAND}/review-stats`;

let database: DatabaseHandle;
let api: ReturnType<typeof callerFor>;
let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  database = await openTestDatabase();
  // The counting below reads the review list page by page: more calls than a minute's limit allows.
  const services = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1000000' });
  api = callerFor(services, DEMO_KEYS.active);
  server = await startServer(services);
});

type Caller = ReturnType<typeof callerFor>;
type StatsInput = Omit<Parameters<Caller['reviewStats']['list']>[0], 'brand_code' | 'page' | 'limit'>;
type StatsRow = Awaited<ReturnType<Caller['reviewStats']['list']>>['data']['items'][number];
type Review = Awaited<ReturnType<Caller['reviews']['list']>>['data']['items'][number];
type Counts = Pick<StatsRow, 'review_count' | 'reply_count' | 'rating_counts'>;

/** Every row of the statistics for `input`, walking pages of 100. */
function stats(input: StatsInput = {}, caller: Caller = api) {
  return walk((page, limit) => caller.reviewStats.list({ brand_code: DEMO_BRAND, ...input, page, limit }), 100);
}

/** Every review the review list returns for these KST days, walking pages of 100. */
function reviewList(from: string, to: string, filters: { platform_shop_id?: string } = {}) {
  return walk((page, limit) => api.reviews.list({ brand_code: DEMO_BRAND, from, to, ...filters, page, limit }), 100);
}

/**
 * The statistics counted from review list items: REPLIED replies; ratings by the rounded-down
 * value with 0.5 counted as one, reviews without rating in no bucket (D-6).
 */
function countOf(reviews: Review[]): Counts {
  const rating_counts = { one: 0, two: 0, three: 0, four: 0, five: 0 };
  const buckets = [undefined, 'one', 'two', 'three', 'four', 'five'] as const;
  for (const review of reviews) {
    if (review.rating === null) continue;
    const bucket = buckets[Math.max(1, Math.floor(review.rating))];
    if (bucket) rating_counts[bucket]++;
  }
  return {
    review_count: reviews.length,
    reply_count: reviews.filter((review) => review.reply_status === 'REPLIED').length,
    rating_counts,
  };
}

function groupBy<T>(items: T[], keyOf: (item: T) => string) {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}

function totalOf(rows: Counts[]): Counts {
  const total = countOf([]);
  for (const row of rows) {
    total.review_count += row.review_count;
    total.reply_count += row.reply_count;
    for (const bucket of ['one', 'two', 'three', 'four', 'five'] as const) {
      total.rating_counts[bucket] += row.rating_counts[bucket];
    }
  }
  return total;
}

const FIELDS = [
  'group_by',
  'date',
  'platform_shop_id',
  'shop_name',
  'platform',
  'review_count',
  'reply_count',
  'rating_counts',
];

describe('the counts equal counting the review list for a past range (partner guide § Review statistics, D-6)', () => {
  // The 30 days before today, with the day-boundary reviews of 10 and 11 days ago (00:00:00, 23:59:59).
  const FROM = addDays(TODAY, -30);
  const TO = YESTERDAY;
  const days: string[] = [];
  for (let day = FROM; day <= TO; day = addDays(day, 1)) days.push(day);
  const listed: Review[] = [];

  beforeAll(async () => {
    // Day by day, as a partner would check a day: the list's KST day is the aggregate's.
    for (const day of days) listed.push(...(await reviewList(day, day)));
    expect(listed.length).toBeGreaterThan(500);
  });

  it('by date: review_count, reply_count and rating_counts of every day, newest first', async () => {
    const perDay = groupBy(listed, (review) => review.date.slice(0, 10));
    const expected = [...days]
      .reverse()
      .filter((day) => perDay.has(day))
      .map((day) => ({
        group_by: 'date',
        date: day,
        platform_shop_id: null,
        shop_name: null,
        platform: null,
        ...countOf(perDay.get(day) ?? []),
      }));
    expect(await stats({ from: FROM, to: TO })).toEqual(expected);
    // The buckets are really exercised: unrated reviews exist, and so do 0.5 and 4.5 ratings.
    expect(listed.some((review) => review.rating === null)).toBe(true);
    expect(listed.some((review) => review.rating === 4.5)).toBe(true);
  });

  it('by shop and by platform: the counts of each, summing to the same totals as by date', async () => {
    const byShop = await stats({ from: FROM, to: TO, group_by: 'shop' });
    const perShop = groupBy(listed, (review) => `${review.platform}|${review.platform_shop_id}`);
    expect(byShop).toHaveLength(perShop.size);
    for (const row of byShop) {
      const reviews = perShop.get(`${row.platform}|${row.platform_shop_id}`) ?? [];
      expect(row).toEqual({
        group_by: 'shop',
        date: null,
        platform_shop_id: reviews[0]?.platform_shop_id,
        shop_name: reviews[0]?.shop_name,
        platform: reviews[0]?.platform,
        ...countOf(reviews),
      });
    }

    const byPlatform = await stats({ from: FROM, to: TO, group_by: 'platform' });
    const perPlatform = groupBy(listed, (review) => review.platform);
    expect(byPlatform).toHaveLength(perPlatform.size);
    for (const row of byPlatform) {
      expect(row).toEqual({
        group_by: 'platform',
        date: null,
        platform_shop_id: null,
        shop_name: null,
        platform: row.platform,
        ...countOf(perPlatform.get(row.platform ?? '') ?? []),
      });
    }

    const total = countOf(listed);
    expect(totalOf(await stats({ from: FROM, to: TO }))).toEqual(total);
    expect(totalOf(byShop)).toEqual(total);
    expect(totalOf(byPlatform)).toEqual(total);
  });

  it('filters by platform and by platform_shop_id', async () => {
    const naver = listed.filter((review) => review.platform === 'NAVER');
    expect(naver.length).toBeGreaterThan(0);
    expect(totalOf(await stats({ from: FROM, to: TO, platform: 'NAVER' }))).toEqual(countOf(naver));
    const naverShops = await stats({ from: FROM, to: TO, group_by: 'shop', platform: 'NAVER' });
    expect(new Set(naverShops.map((row) => row.platform))).toEqual(new Set(['NAVER']));

    const gangnam = listed.filter((review) => review.platform_shop_id === '10482913');
    const perDay = groupBy(gangnam, (review) => review.date.slice(0, 10));
    const rows = await stats({ from: FROM, to: TO, platform_shop_id: '10482913' });
    expect(rows.map((row) => [row.date, row.review_count])).toEqual(
      [...perDay.keys()]
        .sort()
        .reverse()
        .map((day) => [day, perDay.get(day)?.length]),
    );
    expect(await stats({ from: FROM, to: TO, platform_shop_id: '10482913', platform: 'CPEATS' })).toEqual([]);
  });
});

describe('today and the shop linked today (D-6)', () => {
  it('today never appears, even with to=today, though the review list has reviews of today', async () => {
    expect((await reviewList(TODAY, TODAY)).length).toBeGreaterThan(0);
    expect(await stats({ from: TODAY, to: TODAY })).toEqual([]);
    const dates = (await stats({ from: addDays(TODAY, -3), to: TODAY })).map((row) => row.date);
    expect(dates).toEqual([YESTERDAY, addDays(TODAY, -2), addDays(TODAY, -3)]);
    // Through today or through yesterday: the same numbers.
    for (const group_by of ['shop', 'platform'] as const) {
      expect(await stats({ from: addDays(TODAY, -7), to: TODAY, group_by })).toEqual(
        await stats({ from: addDays(TODAY, -7), to: YESTERDAY, group_by }),
      );
    }
  });

  it('the shop linked today has no row, even for history collected before today (D-6)', async () => {
    // Give the shop a review of yesterday, as a link collects history, and rebuild: still no row.
    const [linked] = await database.db
      .select({ id: shops.id, brandId: shops.brandId })
      .from(shops)
      .where(and(eq(shops.platform, 'BAEMIN'), eq(shops.platformShopId, LINKED_TODAY)));
    if (!linked) throw new Error('linked-today shop missing');
    const writtenAt = new Date(kstDayStart(YESTERDAY).getTime() + 12 * 3_600_000);
    await database.db
      .insert(reviews)
      .values({ reviewCode: 'LINKED1', brandId: linked.brandId, shopId: linked.id, writtenAt, rating: 5 });
    try {
      await buildDailyAggregate(database.db, { now: NOW });
      expect((await reviewList(YESTERDAY, TODAY, { platform_shop_id: LINKED_TODAY })).length).toBeGreaterThan(1);
      const shopsShown = (await stats({ group_by: 'shop' })).map((row) => row.platform_shop_id);
      expect(shopsShown.length).toBeGreaterThan(10);
      expect(shopsShown).not.toContain(LINKED_TODAY);
      expect(await stats({ platform_shop_id: LINKED_TODAY })).toEqual([]);
    } finally {
      await database.db.delete(reviews).where(eq(reviews.reviewCode, 'LINKED1'));
      await buildDailyAggregate(database.db, { now: NOW });
    }
  });
});

describe('fields (partner guide § Review statistics)', () => {
  const FILLED = {
    date: ['date'],
    shop: ['platform_shop_id', 'shop_name', 'platform'],
    platform: ['platform'],
  } as const;

  it.each(Object.entries(FILLED))(
    'group_by=%s fills exactly %j, in the documented field order',
    async (group_by, filled) => {
      const rows = await stats({ group_by: group_by as keyof typeof FILLED });
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(Object.keys(row)).toEqual(FIELDS);
        expect(row.group_by).toBe(group_by);
        for (const key of ['date', 'platform_shop_id', 'shop_name', 'platform'] as const) {
          expect(row[key] === null, `${key} of ${JSON.stringify(row)}`).toBe(
            !(filled as readonly string[]).includes(key),
          );
        }
        expect(Object.keys(row.rating_counts)).toEqual(['one', 'two', 'three', 'four', 'five']);
      }
    },
  );

  it('group_by defaults to date', async () => {
    expect(await stats()).toEqual(await stats({ group_by: 'date' }));
  });
});

/** The documented order with D-9 ties: review_count descending, then the key ascending (byte order). */
const byCountThenKey = (a: StatsRow, b: StatsRow) =>
  b.review_count - a.review_count ||
  byteOrder(a.platform_shop_id ?? '', b.platform_shop_id ?? '') ||
  byteOrder(a.platform ?? '', b.platform ?? '');

describe('order (partner guide § Review statistics, D-9) and pages', () => {
  it('date: newest first', async () => {
    const dates = (await stats()).map((row) => row.date ?? '');
    expect(dates).toEqual([...dates].sort().reverse());
    expect(new Set(dates).size).toBe(dates.length);
  });

  it.each(['shop', 'platform'] as const)('%s: review_count descending, ties by the key', async (group_by) => {
    const rows = await stats({ group_by });
    expect(rows).toEqual([...rows].sort(byCountThenKey));
  });

  it('breaks ties by platform_shop_id then platform, and platform by platform, when every count is equal', async () => {
    // Its own copy: every count becomes 0, and a CPEATS shop takes the platform_shop_id of a BAEMIN one.
    const copy = await openTestDatabase();
    const caller = callerFor(testServices(copy.db), DEMO_KEYS.active);
    const [gangnam] = await copy.db
      .select({ brandId: shops.brandId })
      .from(shops)
      .where(and(eq(shops.platform, 'BAEMIN'), eq(shops.platformShopId, '10482913')));
    if (!gangnam) throw new Error('demo data: 10482913 is missing');
    const [twin] = await copy.db
      .insert(shops)
      .values({
        brandId: gangnam.brandId,
        platform: 'CPEATS',
        platformShopId: '10482913',
        name: '치킨하우스 쌍둥이점',
        categoryName: '치킨',
        status: 'ACTIVE',
        linkedAt: new Date('2020-01-01T00:00:00Z'),
      })
      .returning({ id: shops.id });
    if (!twin) throw new Error('not inserted');
    await copy.db.insert(reviewStatsDaily).values({
      shopId: twin.id,
      day: YESTERDAY,
      brandId: gangnam.brandId,
      reviewCount: 0,
      replyCount: 0,
      ratingOne: 0,
      ratingTwo: 0,
      ratingThree: 0,
      ratingFour: 0,
      ratingFive: 0,
      runningRows: 1,
      runningReviewCount: 0,
      runningReplyCount: 0,
      runningRatingOne: 0,
      runningRatingTwo: 0,
      runningRatingThree: 0,
      runningRatingFour: 0,
      runningRatingFive: 0,
    });
    // The running totals follow: with every count 0, every running count is 0 too.
    await copy.db.update(reviewStatsDaily).set({ reviewCount: 0, runningReviewCount: 0 });

    const byShop = await stats({ group_by: 'shop' }, caller);
    const keys = byShop.map((row) => [row.platform_shop_id ?? '', row.platform ?? ''] as const);
    expect(keys).toEqual([...keys].sort((a, b) => byteOrder(a[0], b[0]) || byteOrder(a[1], b[1])));
    expect(keys.filter(([id]) => id === '10482913').map(([, platform]) => platform)).toEqual(['BAEMIN', 'CPEATS']);
    // Byte order, not number order: '10200417' < '1184920337' < '1290018846'.
    expect(keys.slice(0, 3).map(([id]) => id)).toEqual(['10200417', '10482913', '10482913']);

    const platforms = (await stats({ group_by: 'platform' }, caller)).map((row) => row.platform);
    expect(platforms).toEqual(['BAEMIN', 'CPEATS', 'DDANGYO', 'MUKKEBI', 'NAVER', 'YOGIYO']);
  });

  it.each([
    ['date', 1],
    ['shop', 7],
    ['platform', 4],
  ] as const)('group_by=%s: walking pages of %i gives the rows of one page of 100', async (group_by, limit) => {
    const all = (await api.reviewStats.list({ brand_code: DEMO_BRAND, group_by, limit: 100 })).data;
    expect(all.has_next).toBe(false);
    expect(
      await walk((page, size) => api.reviewStats.list({ brand_code: DEMO_BRAND, group_by, page, limit: size }), limit),
    ).toEqual(all.items);
  });
});

describe('default range (partner guide § Dates and time (KST))', () => {
  it('without from and to: the 30 days before today through today', async () => {
    const rows = await stats();
    expect(rows).toEqual(await stats({ from: addDays(TODAY, -30), to: TODAY }));
    expect(rows.at(0)?.date).toBe(YESTERDAY);
    expect(rows.at(-1)?.date).toBe(addDays(TODAY, -30));
  });

  it('with only to: the 30 days before it through it', async () => {
    const to = addDays(TODAY, -40);
    const rows = await stats({ to });
    expect(rows).toEqual(await stats({ from: addDays(to, -30), to }));
    expect([rows.at(0)?.date, rows.at(-1)?.date]).toEqual([to, addDays(to, -30)]);
  });

  it('with only from: through today', async () => {
    const from = addDays(TODAY, -45);
    expect(await stats({ from, group_by: 'shop' })).toEqual(await stats({ from, to: TODAY, group_by: 'shop' }));
  });
});

describe('parameters (partner guide § Errors, D-11, D-13)', () => {
  it.each([
    '?from=2026-1-1',
    '?from=2026-02-30',
    '?to=2026-13-01',
    '?from=20260101',
    `?from=${YESTERDAY}&to=${addDays(TODAY, -2)}`, // from later than to
    `?from=${addDays(TODAY, 1)}`, // from later than the default to (today)
    '?group_by=month',
    '?group_by=DATE',
    '?group_by=date&group_by=shop', // given twice
    '?platform=naver',
    '?platform=NAVER&platform=BAEMIN',
    '?limit=101',
  ])('rejects %s with 400 PARTNER_API_INVALID_PARAMETER', async (query) => {
    expectErrorBody(
      await server.request(`${PATH}${query}`, { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
  });

  it.each([
    '?platform=NAVER',
    '?platform=MUKKEBI&group_by=platform',
    '?group_by=&from=&to=',
    `?from=${TODAY}&to=${TODAY}`,
    `?to=${addDays(TODAY, 30)}`,
  ])('accepts %s', async (query) => {
    expect((await server.request(`${PATH}${query}`, { key: DEMO_KEYS.active })).status).toBe(200);
  });

  it('judges parameters, from > to included, before the brand (D-13); a foreign brand is 404', async () => {
    const foreign = '/partner/v1/brands/burger-town/review-stats';
    expectErrorBody(
      await server.request(`${foreign}?group_by=month`, { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
    expectErrorBody(
      await server.request(`${foreign}?from=${addDays(TODAY, 1)}`, { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
    expectErrorBody(await server.request(foreign, { key: DEMO_KEYS.active }), 'PARTNER_API_BRAND_NOT_FOUND');
    await expectPartnerError(
      api.reviewStats.list({ brand_code: DEMO_BRAND, from: YESTERDAY, to: addDays(TODAY, -2) }),
      'PARTNER_API_INVALID_PARAMETER',
    );
    await expectPartnerError(api.reviewStats.list({ brand_code: 'burger-town' }), 'PARTNER_API_BRAND_NOT_FOUND');
  });
});

describe('the source (D-6)', () => {
  it('is the aggregate alone: a review collected since the last run shows after the next one', async () => {
    const copy = await openTestDatabase();
    const caller = callerFor(testServices(copy.db), DEMO_KEYS.active);
    const filters = { from: YESTERDAY, to: YESTERDAY, platform_shop_id: '10482913' };
    const before = totalOf(await stats(filters, caller));
    const [gangnam] = await copy.db
      .select({ id: shops.id, brandId: shops.brandId })
      .from(shops)
      .where(and(eq(shops.platform, 'BAEMIN'), eq(shops.platformShopId, '10482913')));
    if (!gangnam) throw new Error('demo data: 10482913 is missing');
    await copy.db.insert(reviews).values({
      reviewCode: 'R-LATE-1',
      brandId: gangnam.brandId,
      shopId: gangnam.id,
      writtenAt: kstDayStart(YESTERDAY),
      rating: 0.5,
      replyState: 'OWNER_DIRECT',
    });
    expect(totalOf(await stats(filters, caller))).toEqual(before);
    await buildDailyAggregate(copy.db, { now: NOW });
    expect(totalOf(await stats(filters, caller))).toEqual({
      review_count: before.review_count + 1,
      reply_count: before.reply_count + 1,
      rating_counts: { ...before.rating_counts, one: before.rating_counts.one + 1 },
    });
  });
});
