import { asc, desc, eq, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { reviewStatsDaily, shops } from '../schema';
import type { platformEnum } from '../schema/enums';
import type { BrandScope } from './brands';
import { type PageRequest, paginate } from './pagination';
import { groupingKeys, reportConditions, sumOf } from './report';

// Review statistics (spec §4.7), read only from the daily aggregate (D-6): the numbers are the job's.

export const REVIEW_STATS_GROUP_BY = ['date', 'shop', 'platform'] as const;
export type ReviewStatsGroupBy = (typeof REVIEW_STATS_GROUP_BY)[number];
type Platform = (typeof platformEnum.enumValues)[number];

/** The parameters of spec §4.7, validated and with the range defaults applied. Days are KST, inclusive. */
export type ReviewStatsFilters = {
  from: string;
  to: string;
  group_by: ReviewStatsGroupBy;
  platform?: Platform | undefined;
  platform_shop_id?: string | undefined;
};

const daily = reviewStatsDaily;

/** The grouping keys of a statistics row, in the row's field order (spec §2). */
const KEYS = {
  date: sql<string>`${daily.day}`,
  platform_shop_id: sql<string>`${shops.platformShopId}`,
  shop_name: sql<string>`${shops.name}`,
  // As text in byte order: the tie-break of D-9 ("platform as text", as the shop list).
  platform: sql<Platform>`(${shops.platform}::text COLLATE "C")`,
};

const TOTALS = {
  review_count: sumOf(daily.reviewCount),
  reply_count: sumOf(daily.replyCount),
  one: sumOf(daily.ratingOne),
  two: sumOf(daily.ratingTwo),
  three: sumOf(daily.ratingThree),
  four: sumOf(daily.ratingFour),
  five: sumOf(daily.ratingFive),
};

/**
 * Per group_by: the keys it groups by, i.e. the fields it fills (spec §4.7 table; the others are null),
 * and its order: date newest first, the others by review_count descending, ties by the grouping key
 * ascending (D-9) so that pages never skip or repeat a row.
 */
const GROUPINGS: Record<ReviewStatsGroupBy, { keys: (keyof typeof KEYS)[]; orderBy: SQL[] }> = {
  date: { keys: ['date'], orderBy: [desc(KEYS.date)] },
  shop: {
    keys: ['platform_shop_id', 'shop_name', 'platform'],
    orderBy: [desc(TOTALS.review_count), asc(KEYS.platform_shop_id), asc(KEYS.platform)],
  },
  platform: { keys: ['platform'], orderBy: [desc(TOTALS.review_count), asc(KEYS.platform)] },
};

/** Statistics rows of the brand for the range, grouped per `group_by`; groups without a row do not appear. */
export function listReviewStats(db: Db, brand: BrandScope, filters: ReviewStatsFilters, page: PageRequest) {
  const { group_by } = filters;
  const grouping = GROUPINGS[group_by];
  return paginate(async ({ limit, offset }) => {
    const rows = await db
      .select({ ...groupingKeys(KEYS, grouping.keys), ...TOTALS })
      .from(daily)
      .innerJoin(shops, eq(shops.id, daily.shopId))
      .where(reportConditions(daily, brand, filters))
      .groupBy(...grouping.keys.map((key) => KEYS[key]))
      .orderBy(...grouping.orderBy)
      .limit(limit)
      .offset(offset);
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
