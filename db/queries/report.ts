import { and, eq, gte, lte, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { shops } from '../schema';
import type { platformEnum } from '../schema/enums';
import type { BrandScope } from './brands';

// What the two reads of the daily aggregate (review-stats, sales) share.

/**
 * The filters of spec §4.7 / §4.8 on a daily aggregate table joined with its shops: the brand (tenancy),
 * the KST day range (both inclusive, defaults already applied), and the optional platform and shop.
 */
export function reportConditions(
  daily: { brandId: PgColumn; day: PgColumn; shopId: PgColumn },
  brand: BrandScope,
  filters: {
    from: string;
    to: string;
    platform?: (typeof platformEnum.enumValues)[number] | undefined;
    platform_shop_id?: string | undefined;
  },
): SQL | undefined {
  const shopFilter = and(
    filters.platform === undefined ? undefined : eq(shops.platform, filters.platform),
    filters.platform_shop_id === undefined ? undefined : eq(shops.platformShopId, filters.platform_shop_id),
  );
  return and(
    eq(daily.brandId, brand.id),
    gte(daily.day, filters.from),
    lte(daily.day, filters.to),
    // A semi-join on the brand's few shops, so the aggregate rows are filtered before any join.
    shopFilter &&
      sql`${daily.shopId} IN (SELECT ${shops.id} FROM ${shops} WHERE ${shops.brandId} = ${brand.id} AND ${shopFilter})`,
  );
}

/**
 * SUM of an integer column as a JS number. PostgreSQL sums integers as bigint or numeric, which neither
 * driver returns as a number (postgres.js gives text); the totals stay far below 2^53, so Number is exact.
 */
export function sumOf(column: SQLWrapper): SQL<number> {
  return sql`sum(${column})`.mapWith(Number);
}

/** A key a grouping does not fill. */
export const NONE = sql<null>`NULL`;

/**
 * The select fields of one grouping of a report: the keys it groups by as they are, every other key NULL,
 * so each group_by fills exactly its own fields and all rows have one shape (spec §4.7, §4.8 field tables).
 */
export function groupingKeys<Keys extends Record<string, SQL>>(
  keys: Keys,
  groupedBy: readonly (keyof Keys)[],
): { [Name in keyof Keys]: Keys[Name] | SQL<null> } {
  const fields: Record<string, SQL> = {};
  for (const [name, expression] of Object.entries(keys)) fields[name] = groupedBy.includes(name) ? expression : NONE;
  return fields as { [Name in keyof Keys]: Keys[Name] | SQL<null> };
}
