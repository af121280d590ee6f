import { asc, desc, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { reviewStatsDaily, shops } from '../schema';
import type { platformEnum } from '../schema/enums';
import type { BrandScope } from './brands';
import { literalLimit, type PageRequest, paginate } from './pagination';
import { groupingKeys, NONE, type ReportFilters, reportConditions, shopRangeTotals, sumOf } from './report';

// Review statistics (partner guide § Review statistics), read only from the daily aggregate (D-6).

export const REVIEW_STATS_GROUP_BY = ['date', 'shop', 'platform'] as const;
export type ReviewStatsGroupBy = (typeof REVIEW_STATS_GROUP_BY)[number];
type Platform = (typeof platformEnum.enumValues)[number];

export type ReviewStatsFilters = ReportFilters & { group_by: ReviewStatsGroupBy };

const daily = reviewStatsDaily;

const dailyTotals = () => ({
  review_count: sumOf(daily.reviewCount),
  reply_count: sumOf(daily.replyCount),
  one: sumOf(daily.ratingOne),
  two: sumOf(daily.ratingTwo),
  three: sumOf(daily.ratingThree),
  four: sumOf(daily.ratingFour),
  five: sumOf(daily.ratingFive),
});

/** Statistics of the brand for the range, grouped per `group_by`, ordered as documented with D-9's tie-break. */
export function listReviewStats(db: Db, brand: BrandScope, filters: ReviewStatsFilters, page: PageRequest) {
  const { group_by } = filters;
  return paginate(async ({ limit, offset }) => {
    const query = group_by === 'date' ? byDate(db, brand, filters) : byShop(db, brand, filters);
    const rows = await query.limit(literalLimit(limit)).offset(offset);
    return rows.map((row) => ({
      group_by,
      date: row.date,
      platform_shop_id: row.platform_shop_id,
      shop_name: row.shop_name,
      platform: row.platform,
      review_count: row.review_count,
      reply_count: row.reply_count,
      rating_counts: { one: row.one, two: row.two, three: row.three, four: row.four, five: row.five },
    }));
  }, page);
}

/** group_by=date: the aggregate alone, no join (a shop filter is a semi-join in reportConditions). */
function byDate(db: Db, brand: BrandScope, filters: ReviewStatsFilters) {
  const day = sql<string>`${daily.day}`;
  return db
    .select({
      ...groupingKeys({ date: day, platform_shop_id: NONE, shop_name: NONE, platform: NONE }, ['date']),
      ...dailyTotals(),
    })
    .from(daily)
    .where(reportConditions(daily, brand, filters))
    .groupBy(daily.day)
    .orderBy(desc(day));
}

const runningTotals = {
  review_count: daily.runningReviewCount,
  reply_count: daily.runningReplyCount,
  one: daily.runningRatingOne,
  two: daily.runningRatingTwo,
  three: daily.runningRatingThree,
  four: daily.runningRatingFour,
  five: daily.runningRatingFive,
};

/** group_by=shop or platform: each shop's counts from the running totals (report.ts), then grouped. */
function byShop(db: Db, brand: BrandScope, filters: ReviewStatsFilters) {
  const range = shopRangeTotals(db, daily, runningTotals, brand, filters);
  const totals = range.totals;
  const keys = {
    date: NONE,
    platform_shop_id: sql<string>`${shops.platformShopId}`,
    shop_name: sql<string>`${shops.name}`,
    // As text in byte order: the tie-break of D-9 ("platform as text", as the shop list).
    platform: sql<Platform>`(${shops.platform}::text COLLATE "C")`,
  };
  const grouping =
    filters.group_by === 'shop'
      ? {
          keys: ['platform_shop_id', 'shop_name', 'platform'] as const,
          orderBy: [desc(totals.review_count), asc(keys.platform_shop_id), asc(keys.platform)],
        }
      : { keys: ['platform'] as const, orderBy: [desc(totals.review_count), asc(keys.platform)] };
  return db
    .select({ ...groupingKeys(keys, grouping.keys), ...totals })
    .from(shops)
    .crossJoinLateral(range.upTo)
    .leftJoinLateral(range.beforeFrom, sql`true`)
    .where(range.where)
    .groupBy(...grouping.keys.map((key) => keys[key]))
    .orderBy(...grouping.orderBy);
}
