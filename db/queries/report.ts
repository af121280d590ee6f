import { and, desc, eq, gte, lt, lte, type SQL, type SQLWrapper, type Subquery, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../client';
import { shops } from '../schema';
import type { platformEnum } from '../schema/enums';
import type { BrandScope } from './brands';
import { literalLimit } from './pagination';

export type ReportFilters = {
  from: string;
  to: string;
  platform?: (typeof platformEnum.enumValues)[number] | undefined;
  platform_shop_id?: string | undefined;
};

function shopFilter(filters: ReportFilters): SQL | undefined {
  return and(
    filters.platform === undefined ? undefined : eq(shops.platform, filters.platform),
    filters.platform_shop_id === undefined ? undefined : eq(shops.platformShopId, filters.platform_shop_id),
  );
}

/** The row-by-row filters on a daily aggregate table (group_by=date, week): brand, day range, platform, shop. */
export function reportConditions(
  daily: { brandId: PgColumn; day: PgColumn; shopId: PgColumn },
  brand: BrandScope,
  filters: ReportFilters,
): SQL | undefined {
  const onShops = shopFilter(filters);
  return and(
    eq(daily.brandId, brand.id),
    gte(daily.day, filters.from),
    lte(daily.day, filters.to),
    // A semi-join on the brand's few shops, so the aggregate rows are filtered before any join.
    onShops &&
      sql`${daily.shopId} IN (SELECT ${shops.id} FROM ${shops} WHERE ${shops.brandId} = ${brand.id} AND ${onShops})`,
  );
}

type RunningDaily = PgTable & { shopId: PgColumn; day: PgColumn; runningRows: PgColumn };

/**
 * Each shop's totals over [from, to], two primary-key probes per shop; a shop without rows in it does not appear
 * (D-6). The caller selects FROM `shops`, joins `upTo` and `beforeFrom`, filters by `where` and groups.
 */
export function shopRangeTotals<Running extends Record<string, PgColumn>>(
  db: Db,
  daily: RunningDaily,
  running: Running,
  brand: BrandScope,
  filters: ReportFilters,
) {
  const lastRow = (alias: string, onOrBefore: SQL) =>
    db
      .select({ rows: daily.runningRows, ...running })
      .from(daily)
      .where(and(eq(daily.shopId, shops.id), onOrBefore))
      .orderBy(desc(daily.day))
      .limit(literalLimit(1))
      // Its fields are read by name below (`field`); typed loosely so the generic join type stays simple.
      .as(alias) as unknown as Subquery;
  const upTo = lastRow('up_to', lte(daily.day, filters.to));
  const beforeFrom = lastRow('before_from', lt(daily.day, filters.from));
  const field = (subquery: Subquery, name: string) => (subquery as unknown as Record<string, SQLWrapper>)[name];
  const inRange = (name: string) => sql`${field(upTo, name)} - coalesce(${field(beforeFrom, name)}, 0)`;
  const totals = Object.fromEntries(Object.keys(running).map((name) => [name, sumOf(inRange(name))])) as {
    [Name in keyof Running]: SQL<number>;
  };
  return {
    /** CROSS JOIN LATERAL on `shops`: a shop without any row on or before `to` drops out right there. */
    upTo,
    /** LEFT JOIN LATERAL … ON true on `shops`: no row before `from` counts as 0. */
    beforeFrom,
    totals,
    where: and(eq(shops.brandId, brand.id), shopFilter(filters), sql`${inRange('rows')} > 0`),
  };
}

/** SUM of an integer column as a JS number: PostgreSQL sums to bigint/numeric; the totals stay below 2^53. */
export function sumOf(column: SQLWrapper): SQL<number> {
  return sql`sum(${column})`.mapWith(Number);
}

export const NONE = sql<null>`NULL`;

/** One grouping's select fields: its keys as they are, every other key NULL, so all rows have one shape. */
export function groupingKeys<Keys extends Record<string, SQL>>(
  keys: Keys,
  groupedBy: readonly (keyof Keys)[],
): { [Name in keyof Keys]: Keys[Name] | SQL<null> } {
  const fields: Record<string, SQL> = {};
  for (const [name, expression] of Object.entries(keys)) fields[name] = groupedBy.includes(name) ? expression : NONE;
  return fields as { [Name in keyof Keys]: Keys[Name] | SQL<null> };
}
