import { asc, desc, eq, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { mondayOfDay } from '../kst';
import { brandUsers, type SALES_PLATFORMS, salesDaily, shops } from '../schema';
import type { BrandScope } from './brands';
import { type PageRequest, paginate } from './pagination';
import { groupingKeys, reportConditions, sumOf } from './report';

// Sales (spec §4.8), read only from the daily aggregate (D-6): the numbers are the job's.

export const SALES_GROUP_BY = ['shop', 'platform', 'user', 'date', 'week'] as const;
export type SalesGroupBy = (typeof SALES_GROUP_BY)[number];
type SalesPlatform = (typeof SALES_PLATFORMS)[number];

/** The parameters of spec §4.8, validated and with the range defaults applied. Days are KST, inclusive. */
export type SalesFilters = {
  from: string;
  to: string;
  group_by: SalesGroupBy;
  platform?: SalesPlatform | undefined;
  platform_shop_id?: string | undefined;
};

const daily = salesDaily;

/** The grouping keys of a sales row, in the row's field order (spec §2); user_* become `user`. */
const KEYS = {
  date: sql<string>`${daily.day}`,
  // Rule 1: weeks start on Monday. Only days inside [from, to] are summed (the where below), so the weeks
  // at both ends of the range are partial.
  week_start: mondayOfDay(daily.day),
  platform_shop_id: sql<string>`${shops.platformShopId}`,
  shop_name: sql<string>`${shops.name}`,
  // As text in byte order: the tie-break of D-9 ("platform as text", as the shop list). The aggregate
  // holds only the sales platforms.
  platform: sql<SalesPlatform>`(${shops.platform}::text COLLATE "C")`,
  user_code: sql<string>`${brandUsers.userCode}`,
  user_name: sql<string>`${brandUsers.displayName}`,
};

const salesAmount = sumOf(daily.salesAmount);

/**
 * Per group_by: the keys it groups by, i.e. the fields it fills (spec §4.8 table; the others are null),
 * and its order: shop, platform and user by sales_amount descending, ties by the grouping key ascending
 * (D-9: platform_shop_id then platform; user_code with the null user last); date and week newest first.
 * group_by=user groups the shops without a brand user under one `user: null` row (D-10), so every
 * group_by sums the same rows.
 */
const GROUPINGS: Record<SalesGroupBy, { keys: (keyof typeof KEYS)[]; orderBy: SQL[] }> = {
  shop: {
    keys: ['platform_shop_id', 'shop_name', 'platform', 'user_code', 'user_name'],
    orderBy: [desc(salesAmount), asc(KEYS.platform_shop_id), asc(KEYS.platform)],
  },
  platform: { keys: ['platform'], orderBy: [desc(salesAmount), asc(KEYS.platform)] },
  user: {
    keys: ['user_code', 'user_name'],
    orderBy: [desc(salesAmount), sql`${KEYS.user_code} ASC NULLS LAST`],
  },
  date: { keys: ['date'], orderBy: [desc(KEYS.date)] },
  week: { keys: ['week_start'], orderBy: [desc(KEYS.week_start)] },
};

/** Sales rows of the brand for the range, grouped per `group_by`; groups without a row do not appear. */
export function listSales(db: Db, brand: BrandScope, filters: SalesFilters, page: PageRequest) {
  const { group_by } = filters;
  const grouping = GROUPINGS[group_by];
  return paginate(async ({ limit, offset }) => {
    const rows = await db
      .select({ ...groupingKeys(KEYS, grouping.keys), sales_amount: salesAmount })
      .from(daily)
      .innerJoin(shops, eq(shops.id, daily.shopId))
      .leftJoin(brandUsers, eq(brandUsers.id, shops.userId))
      .where(reportConditions(daily, brand, filters))
      .groupBy(...grouping.keys.map((key) => KEYS[key]))
      .orderBy(...grouping.orderBy)
      .limit(limit)
      .offset(offset);
    return rows.map((row) => ({
      group_by,
      date: row.date,
      week_start: row.week_start,
      platform_shop_id: row.platform_shop_id,
      shop_name: row.shop_name,
      platform: row.platform,
      user:
        row.user_code === null || row.user_name === null
          ? null
          : { user_code: row.user_code, display_name: row.user_name },
      sales_amount: row.sales_amount,
    }));
  }, page);
}
