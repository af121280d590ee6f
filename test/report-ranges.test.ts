import { and, eq, gte, lte, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDailyAggregate } from '../db/aggregate';
import type { DatabaseHandle } from '../db/client';
import { addDays, kstDayStart, kstToday } from '../db/kst';
import type { BrandScope } from '../db/queries/brands';
import { listReviewStats, REVIEW_STATS_GROUP_BY } from '../db/queries/reviewStats';
import { listSales, SALES_GROUP_BY } from '../db/queries/sales';
import { brands, reviewStatsDaily, salesDaily, salesSnapshots, shops } from '../db/schema';
import { NOW, openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { createBrandWithReviews, type ReviewSpec } from './support/factories';

// Review-stats and sales by shop, platform and user read the aggregate's running totals (prefix
// sums) at two rows per shop. These tests hold that read to the plain sum over the daily rows at every
// boundary: ranges that start or end on a day with a row or without one, a shop with rows only outside
// the range (absent, D-6), a sales day of amount 0 (present, with 0), from = to;
// and every group_by adds up to the same totals (D-10).

const TODAY = kstToday(NOW);
const day = (daysAgo: number) => addDays(TODAY, -daysAgo);

let database: DatabaseHandle;

beforeAll(async () => {
  database = await openTestDatabase();
});

type Counts = {
  review_count: number;
  reply_count: number;
  one: number;
  two: number;
  three: number;
  four: number;
  five: number;
};
const NO_COUNTS: Counts = { review_count: 0, reply_count: 0, one: 0, two: 0, three: 0, four: 0, five: 0 };

function add(total: Counts, row: Counts): Counts {
  return {
    review_count: total.review_count + row.review_count,
    reply_count: total.reply_count + row.reply_count,
    one: total.one + row.one,
    two: total.two + row.two,
    three: total.three + row.three,
    four: total.four + row.four,
    five: total.five + row.five,
  };
}

/** Every row of a report, page after page of 100. */
async function allPages<T>(
  read: (page: { page: number; limit: number }) => Promise<{ items: T[]; has_next: boolean }>,
) {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const answer = await read({ page, limit: 100 });
    items.push(...answer.items);
    if (!answer.has_next) return items;
  }
}

async function statsRows(brand: BrandScope, filters: Parameters<typeof listReviewStats>[2]) {
  const items = await allPages((page) => listReviewStats(database.db, brand, filters, page));
  return items.map(({ rating_counts, ...row }) => ({ ...row, ...rating_counts }));
}

function salesRows(brand: BrandScope, filters: Parameters<typeof listSales>[2]) {
  return allPages((page) => listSales(database.db, brand, filters, page));
}

const countsOf = ({ review_count, reply_count, one, two, three, four, five }: Counts): Counts => ({
  review_count,
  reply_count,
  one,
  two,
  three,
  four,
  five,
});

describe('a brand whose every row is known, every range of a 15-day window', () => {
  // Days are "days ago". Shop 0: reviews and sales on days 20, 15 and 10, the sales of day 15 being 0.
  // Shop 1: rows only on days 30 and 2, outside the window. Shop 2 (another platform): reviews on day 12
  // only, sales on day 18 only and of amount 0.
  const REVIEWS: { shop: number; daysAgo: number; rating: number | null; replied: boolean }[] = [
    { shop: 0, daysAgo: 20, rating: 5, replied: true },
    { shop: 0, daysAgo: 20, rating: 0.5, replied: false },
    { shop: 0, daysAgo: 15, rating: 4.5, replied: true },
    { shop: 0, daysAgo: 15, rating: null, replied: true },
    { shop: 0, daysAgo: 15, rating: 2, replied: false },
    { shop: 0, daysAgo: 10, rating: 3, replied: false },
    { shop: 1, daysAgo: 30, rating: 1, replied: true },
    { shop: 1, daysAgo: 2, rating: 4, replied: false },
    { shop: 2, daysAgo: 12, rating: 5, replied: true },
    { shop: 2, daysAgo: 12, rating: 1.5, replied: false },
  ];
  const SALES: { shop: number; daysAgo: number; amount: number }[] = [
    { shop: 0, daysAgo: 20, amount: 12_000 },
    { shop: 0, daysAgo: 15, amount: 0 },
    { shop: 0, daysAgo: 10, amount: 7_500 },
    { shop: 1, daysAgo: 30, amount: 40_000 },
    { shop: 1, daysAgo: 2, amount: 3_000 },
    { shop: 2, daysAgo: 18, amount: 0 },
  ];
  const WINDOW = { oldest: 22, newest: 8 };

  let brand: BrandScope;
  let shopIds: string[];

  beforeAll(async () => {
    const fixture = await createBrandWithReviews(database.db, {
      critical: [1, 2],
      platforms: ['BAEMIN', 'BAEMIN', 'CPEATS'],
      reviews: REVIEWS.map(
        (review): ReviewSpec => ({
          shop: review.shop,
          writtenAt: new Date(kstDayStart(day(review.daysAgo)).getTime() + 12 * 3_600_000),
          rating: review.rating,
          replyState: review.replied ? 'POSTED' : 'NONE',
        }),
      ),
    });
    brand = { id: fixture.brandId, brandCode: fixture.brandCode };
    shopIds = fixture.shops.map((shop) => shop.platformShopId);
    // Linked long ago, so the aggregate takes them (D-6).
    await database.db
      .update(shops)
      .set({ linkedAt: new Date('2020-01-01T00:00:00Z') })
      .where(eq(shops.brandId, fixture.brandId));
    await database.db.insert(salesSnapshots).values(
      SALES.map((sale) => ({
        shopId: fixture.shops[sale.shop]?.id ?? -1,
        day: day(sale.daysAgo),
        amount: sale.amount,
      })),
    );
    await buildDailyAggregate(database.db, { now: NOW });
  });

  /** Every (from, to) of the window with from ≤ to, as days ago. */
  function ranges() {
    const all: [number, number][] = [];
    for (let from = WINDOW.oldest; from >= WINDOW.newest; from--) {
      for (let to = from; to >= WINDOW.newest; to--) all.push([from, to]);
    }
    return all;
  }

  /** The counts of the review list's rules (D-6), per shop, for a range in days ago. */
  function expectedStats(from: number, to: number) {
    const perShop = new Map<string, Counts>();
    for (const review of REVIEWS.filter((r) => r.daysAgo <= from && r.daysAgo >= to)) {
      const key = shopIds[review.shop] ?? '';
      const bucket =
        review.rating === null
          ? undefined
          : (['one', 'one', 'two', 'three', 'four', 'five'] as const)[Math.floor(review.rating)];
      const counts = { ...NO_COUNTS, review_count: 1, reply_count: review.replied ? 1 : 0 };
      if (bucket) counts[bucket] = 1;
      perShop.set(key, add(perShop.get(key) ?? NO_COUNTS, counts));
    }
    return perShop;
  }

  function expectedSales(from: number, to: number) {
    const perShop = new Map<string, number>();
    for (const sale of SALES.filter((s) => s.daysAgo <= from && s.daysAgo >= to)) {
      const key = shopIds[sale.shop] ?? '';
      perShop.set(key, (perShop.get(key) ?? 0) + sale.amount);
    }
    return perShop;
  }

  it('review-stats by shop: exactly the shops with a row in the range, with their sums', async () => {
    for (const [fromAgo, toAgo] of ranges()) {
      const range = { from: day(fromAgo), to: day(toAgo) };
      const rows = await statsRows(brand, { ...range, group_by: 'shop' });
      const label = `${fromAgo}..${toAgo} days ago`;
      expect(new Map(rows.map((row) => [row.platform_shop_id, countsOf(row)])), label).toEqual(
        expectedStats(fromAgo, toAgo),
      );
      // Every group_by adds up to the same totals.
      const total = [...expectedStats(fromAgo, toAgo).values()].reduce(add, NO_COUNTS);
      for (const group_by of REVIEW_STATS_GROUP_BY) {
        const grouped = (await statsRows(brand, { ...range, group_by })).map(countsOf).reduce(add, NO_COUNTS);
        expect(grouped, `${label}, group_by=${group_by}`).toEqual(total);
      }
    }
  });

  it('sales by shop: a day of amount 0 in the range shows the shop with its amount; no row, no shop', async () => {
    for (const [fromAgo, toAgo] of ranges()) {
      const range = { from: day(fromAgo), to: day(toAgo) };
      const rows = await salesRows(brand, { ...range, group_by: 'shop' });
      const label = `${fromAgo}..${toAgo} days ago`;
      expect(new Map(rows.map((row) => [row.platform_shop_id, row.sales_amount])), label).toEqual(
        expectedSales(fromAgo, toAgo),
      );
      const total = [...expectedSales(fromAgo, toAgo).values()].reduce((sum, amount) => sum + amount, 0);
      for (const group_by of SALES_GROUP_BY) {
        const grouped = await salesRows(brand, { ...range, group_by });
        expect(
          grouped.reduce((sum, row) => sum + row.sales_amount, 0),
          `${label}, group_by=${group_by}`,
        ).toBe(total);
      }
    }
  });

  it('the named boundaries, spelled out', async () => {
    const [first, , third] = shopIds;
    const shopsOf = async (fromAgo: number, toAgo: number) =>
      (await salesRows(brand, { from: day(fromAgo), to: day(toAgo), group_by: 'shop' })).map((row) => [
        row.platform_shop_id,
        row.sales_amount,
      ]);
    // from = to on a day whose amount is 0: the shop is there, with 0.
    expect(await shopsOf(15, 15)).toEqual([[first, 0]]);
    expect(await shopsOf(18, 18)).toEqual([[third, 0]]);
    // from = to on a day without any row: nothing.
    expect(await shopsOf(16, 16)).toEqual([]);
    // Between rows, rows on both sides outside: nothing.
    expect(await shopsOf(14, 11)).toEqual([]);
    // Both ends on rows; both ends off rows.
    expect(await shopsOf(20, 10)).toEqual([
      [first, 19_500],
      [third, 0],
    ]);
    expect(await shopsOf(21, 9)).toEqual(await shopsOf(20, 10));
    // Starting the day after a row, ending the day before one.
    expect(await shopsOf(19, 11)).toEqual([
      [first, 0],
      [third, 0],
    ]);
    // The shop with rows only outside the window never appears inside it, but does over its own days.
    expect((await statsRows(brand, { from: day(29), to: day(3), group_by: 'shop' })).length).toBe(2);
    expect(
      (await statsRows(brand, { from: day(30), to: day(30), group_by: 'shop' })).map((row) => row.platform_shop_id),
    ).toEqual([shopIds[1]]);
  });
});

describe('the demo brand: the running totals agree with a plain sum over the daily rows', () => {
  let brand: BrandScope;
  beforeAll(async () => {
    const [row] = await database.db
      .select({ id: brands.id, brandCode: brands.brandCode })
      .from(brands)
      .where(eq(brands.brandCode, DEMO_BRAND));
    if (!row) throw new Error(`demo data: ${DEMO_BRAND} is missing`);
    brand = row;
  });

  /** Random ranges over the demo data's days (≥ 90 before today) and a little beyond, seeded. */
  function randomRanges(count: number) {
    let seed = 20_261_124;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const all: { from: string; to: string }[] = [];
    for (let i = 0; i < count; i++) {
      const a = Math.floor(next() * 130) - 2; // from 2 days after today to 127 days before
      const b = Math.floor(next() * 130) - 2;
      all.push({ from: day(Math.max(a, b)), to: day(Math.min(a, b)) });
    }
    return all;
  }

  it('review-stats by shop, for 40 random ranges; platform and date give the same totals', async () => {
    const d = reviewStatsDaily;
    for (const range of randomRanges(40)) {
      const sums = await database.db
        .select({
          id: shops.platformShopId,
          platform: shops.platform,
          review_count: sql<number>`sum(${d.reviewCount})`.mapWith(Number),
          reply_count: sql<number>`sum(${d.replyCount})`.mapWith(Number),
          one: sql<number>`sum(${d.ratingOne})`.mapWith(Number),
          two: sql<number>`sum(${d.ratingTwo})`.mapWith(Number),
          three: sql<number>`sum(${d.ratingThree})`.mapWith(Number),
          four: sql<number>`sum(${d.ratingFour})`.mapWith(Number),
          five: sql<number>`sum(${d.ratingFive})`.mapWith(Number),
        })
        .from(d)
        .innerJoin(shops, eq(shops.id, d.shopId))
        .where(and(eq(d.brandId, brand.id), gte(d.day, range.from), lte(d.day, range.to)))
        .groupBy(shops.platformShopId, shops.platform);
      const rows = await statsRows(brand, { ...range, group_by: 'shop' });
      const label = `${range.from}..${range.to}`;
      expect(new Map(rows.map((row) => [`${row.platform}|${row.platform_shop_id}`, countsOf(row)])), label).toEqual(
        new Map(sums.map(({ id, platform, ...counts }) => [`${platform}|${id}`, counts])),
      );
      const total = sums.map(countsOf).reduce(add, NO_COUNTS);
      for (const group_by of ['platform', 'date'] as const) {
        const grouped = (await statsRows(brand, { ...range, group_by })).map(countsOf).reduce(add, NO_COUNTS);
        expect(grouped, `${label}, group_by=${group_by}`).toEqual(total);
      }
    }
  });

  it('sales by shop, for 40 random ranges; platform, user, date and week give the same total', async () => {
    for (const range of randomRanges(40)) {
      const sums = await database.db
        .select({
          id: shops.platformShopId,
          platform: shops.platform,
          amount: sql<number>`sum(${salesDaily.salesAmount})`.mapWith(Number),
        })
        .from(salesDaily)
        .innerJoin(shops, eq(shops.id, salesDaily.shopId))
        .where(and(eq(salesDaily.brandId, brand.id), gte(salesDaily.day, range.from), lte(salesDaily.day, range.to)))
        .groupBy(shops.platformShopId, shops.platform);
      const label = `${range.from}..${range.to}`;
      const rows = await salesRows(brand, { ...range, group_by: 'shop' });
      expect(new Map(rows.map((row) => [`${row.platform}|${row.platform_shop_id}`, row.sales_amount])), label).toEqual(
        new Map(sums.map(({ id, platform, amount }) => [`${platform}|${id}`, amount])),
      );
      const total = sums.reduce((sum, row) => sum + row.amount, 0);
      for (const group_by of ['platform', 'user', 'date', 'week'] as const) {
        const grouped = await salesRows(brand, { ...range, group_by });
        expect(
          grouped.reduce((sum, row) => sum + row.sales_amount, 0),
          `${label}, group_by=${group_by}`,
        ).toBe(total);
      }
    }
  });
});
