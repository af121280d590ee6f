import { asc, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { mondayOfDay } from '../kst';
import { brandUsers, type SALES_PLATFORMS, salesDaily, shops } from '../schema';
import type { BrandScope } from './brands';
import { literalLimit, type PageRequest, paginate } from './pagination';
import { groupingKeys, NONE, type ReportFilters, reportConditions, shopRangeTotals, sumOf } from './report';

// Sales (partner guide § Sales), read only from the daily aggregate (D-6): the numbers are the job's.

export const SALES_GROUP_BY = ['shop', 'platform', 'user', 'date', 'week'] as const;
export type SalesGroupBy = (typeof SALES_GROUP_BY)[number];
type SalesPlatform = (typeof SALES_PLATFORMS)[number];

export type SalesFilters = ReportFilters & { group_by: SalesGroupBy; platform?: SalesPlatform | undefined };

const daily = salesDaily;

/** Sales of the brand for the range, grouped per `group_by`, ordered as documented with D-9's tie-break. */
export function listSales(db: Db, brand: BrandScope, filters: SalesFilters, page: PageRequest) {
  const { group_by } = filters;
  return paginate(async ({ limit, offset }) => {
    const rows = await salesQuery(db, brand, filters).limit(literalLimit(limit)).offset(offset);
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

/** The sales query of a group_by, unpaged and unexecuted; exported so tests can EXPLAIN what the API runs. */
export function salesQuery(db: Db, brand: BrandScope, filters: SalesFilters) {
  return filters.group_by === 'date' || filters.group_by === 'week'
    ? byDay(db, brand, filters)
    : byShop(db, brand, filters);
}

const SHOP_KEYS = { platform_shop_id: NONE, shop_name: NONE, platform: NONE, user_code: NONE, user_name: NONE };

/** group_by=date or week: the aggregate alone; by week, read in order from the index on mondayOfDay. */
function byDay(db: Db, brand: BrandScope, filters: SalesFilters) {
  const byDate = filters.group_by === 'date';
  const key = byDate ? sql<string>`${daily.day}` : mondayOfDay(daily.day);
  const keys = groupingKeys({ date: key, week_start: key, ...SHOP_KEYS }, [byDate ? 'date' : 'week_start']);
  return db
    .select({ ...keys, sales_amount: sumOf(daily.salesAmount) })
    .from(daily)
    .where(reportConditions(daily, brand, filters))
    .groupBy(key)
    .orderBy(desc(key));
}

/** group_by=shop, platform or user: running totals (report.ts); shops without a user are `user: null` (D-10). */
function byShop(db: Db, brand: BrandScope, filters: SalesFilters) {
  const range = shopRangeTotals(db, daily, { sales_amount: daily.runningSalesAmount }, brand, filters);
  const salesAmount = range.totals.sales_amount;
  const keys = {
    date: NONE,
    week_start: NONE,
    platform_shop_id: sql<string>`${shops.platformShopId}`,
    shop_name: sql<string>`${shops.name}`,
    // As text in byte order: the tie-break of D-9 ("platform as text", as the shop list).
    platform: sql<SalesPlatform>`(${shops.platform}::text COLLATE "C")`,
    user_code: sql<string>`${brandUsers.userCode}`,
    user_name: sql<string>`${brandUsers.displayName}`,
  };
  const groupings = {
    shop: {
      keys: ['platform_shop_id', 'shop_name', 'platform', 'user_code', 'user_name'] as const,
      orderBy: [desc(salesAmount), asc(keys.platform_shop_id), asc(keys.platform)],
    },
    platform: { keys: ['platform'] as const, orderBy: [desc(salesAmount), asc(keys.platform)] },
    user: {
      keys: ['user_code', 'user_name'] as const,
      orderBy: [desc(salesAmount), sql`${keys.user_code} ASC NULLS LAST`],
    },
  };
  const grouping =
    groupings[filters.group_by === 'platform' || filters.group_by === 'user' ? filters.group_by : 'shop'];
  return db
    .select({ ...groupingKeys(keys, grouping.keys), sales_amount: salesAmount })
    .from(shops)
    .crossJoinLateral(range.upTo)
    .leftJoinLateral(range.beforeFrom, sql`true`)
    .leftJoin(brandUsers, eq(brandUsers.id, shops.userId))
    .where(range.where)
    .groupBy(...grouping.keys.map((key) => keys[key]))
    .orderBy(...grouping.orderBy);
}
