import { and, eq, getTableColumns, gte, inArray, isNull, lt, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { date, integer, type PgSelect, pgTable } from 'drizzle-orm/pg-core';
import type { Db } from './client';
import { kstDayOf, kstDayStart, kstDayStartOf } from './kst';
import {
  aggregateChanges,
  reviewStatsDaily,
  reviews,
  SALES_PLATFORMS,
  salesDaily,
  salesSnapshots,
  shops,
} from './schema';

// The rows of the daily aggregate (D-6), in full or from the change log; both write the same rows.

export type Transaction = Parameters<Parameters<Db['transaction']>[0]>[0];
type AggregateTable = typeof reviewStatsDaily | typeof salesDaily;

/** An incremental build's temporary tables: claimed shops (from_day null = the whole shop) and their changed days. */
const claimed = pgTable('aggregate_claimed', {
  shopId: integer('shop_id').notNull(),
  day: date('day', { mode: 'string' }),
});
const claimedShops = pgTable('aggregate_claimed_shops', {
  shopId: integer('shop_id').notNull(),
  fromDay: date('from_day', { mode: 'string' }),
});
const claimedDays = pgTable('aggregate_claimed_days', {
  shopId: integer('shop_id').notNull(),
  day: date('day', { mode: 'string' }).notNull(),
});

/** The days a build covers: before `today`, of shops linked before its start (D-6). */
export type Cover = { today: string };

type Source = 'all' | 'days' | 'shops';

const countWhere = (name: string, condition: SQL) => sql<number>`(count(*) FILTER (WHERE ${condition}))::int`.as(name);
const inBucket = (name: string, bucket: number) => countWhere(name, sql`${reviews.starBucket} = ${bucket}`);

/** Counts named as the aggregate's columns; reply_count is the reply state now (D-6). */
const reviewCounts = () => ({
  reviewCount: sql<number>`count(*)::int`.as('review_count'),
  replyCount: countWhere('reply_count', sql`${reviews.isReplied}`),
  ratingOne: inBucket('rating_one', 1),
  ratingTwo: inBucket('rating_two', 2),
  ratingThree: inBucket('rating_three', 3),
  ratingFour: inBucket('rating_four', 4),
  ratingFive: inBucket('rating_five', 5),
});

function reviewsPerDay(tx: Transaction, cover: Cover, source: Exclude<Source, 'days'>) {
  const todayStart = kstDayStart(cover.today);
  const day = kstDayOf(reviews.writtenAt);
  const query = tx
    .select({ shopId: reviews.shopId, day: day.as('day'), brandId: shops.brandId, ...reviewCounts() })
    .from(reviews)
    .innerJoin(shops, eq(shops.id, reviews.shopId))
    .$dynamic();
  return fromSource(query, source, reviews.shopId, () => undefined)
    .where(and(lt(reviews.writtenAt, todayStart), lt(shops.linkedAt, todayStart)))
    .groupBy(reviews.shopId, shops.brandId, day);
}

/** The claimed days, each counted on the (shop_id, written_at) index: as a join, the planner hashed every review. */
function reviewsOnClaimedDays(tx: Transaction, cover: Cover): SQL {
  const todayStart = kstDayStart(cover.today);
  const counts = reviewCounts();
  const counted = tx
    .select(counts)
    .from(reviews)
    .where(
      and(
        eq(reviews.shopId, claimedDays.shopId),
        gte(reviews.writtenAt, kstDayStartOf(claimedDays.day)),
        lt(reviews.writtenAt, kstDayStartOf(sql`${claimedDays.day} + 1`)),
        lt(reviews.writtenAt, todayStart),
      ),
    );
  const countNames = Object.values(counts).map((count) => sql`counted.${sql.identifier(count.fieldAlias)}`);
  return sql`SELECT ${claimedDays.shopId} AS shop_id, ${claimedDays.day} AS day, ${shops.brandId} AS brand_id,
      ${sql.join(countNames, sql`, `)}
    FROM ${claimedDays} JOIN ${shops} ON ${shops.id} = ${claimedDays.shopId}
    CROSS JOIN LATERAL (${counted}) AS counted
    WHERE ${shops.linkedAt} < ${todayStart.toISOString()}::timestamptz AND counted.review_count > 0`;
}

/** Only the sales platforms of partner guide § Sales count, so every sales group_by covers the same rows. */
function salesPerDay(tx: Transaction, cover: Cover, source: Source) {
  const query = tx
    .select({
      shopId: salesSnapshots.shopId,
      day: salesSnapshots.day,
      brandId: shops.brandId,
      salesAmount: sql<number>`${salesSnapshots.amount}`.as('sales_amount'),
    })
    .from(salesSnapshots)
    .innerJoin(shops, eq(shops.id, salesSnapshots.shopId))
    .$dynamic();
  return fromSource(query, source, salesSnapshots.shopId, (days) => eq(salesSnapshots.day, days.day)).where(
    and(
      lt(salesSnapshots.day, cover.today),
      lt(shops.linkedAt, kstDayStart(cover.today)),
      inArray(shops.platform, SALES_PLATFORMS),
    ),
  );
}

/** `query` joined to the claimed days or whole shops; the joins select nothing, so the cast keeps its type. */
function fromSource<T extends PgSelect>(
  query: T,
  source: Source,
  shopId: SQLWrapper,
  onDay: (days: typeof claimedDays) => SQL | undefined,
): T {
  if (source === 'days')
    return query.innerJoin(claimedDays, and(eq(claimedDays.shopId, shopId), onDay(claimedDays))) as unknown as T;
  if (source === 'shops')
    return query.innerJoin(
      claimedShops,
      and(eq(claimedShops.shopId, shopId), isNull(claimedShops.fromDay)),
    ) as unknown as T;
  return query;
}

function perDayOf(tx: Transaction, table: AggregateTable, cover: Cover, source: Source): SQLWrapper {
  if (table === salesDaily) return salesPerDay(tx, cover, source);
  return source === 'days' ? reviewsOnClaimedDays(tx, cover) : reviewsPerDay(tx, cover, source);
}

const names = (table: AggregateTable) => Object.values(getTableColumns(table)).map(({ name }) => name);
const dayColumns = (table: AggregateTable) => names(table).filter((name) => !name.startsWith('running_'));

/** `rows` with running totals per shop, plus `base`'s; MATERIALIZED, as inlined PostgreSQL sorted every review. */
function withRunningTotals(table: AggregateTable, rows: SQLWrapper, base?: SQLWrapper): SQL {
  const columns = names(table).map((name) => {
    if (!name.startsWith('running_')) return sql`per_day.${sql.identifier(name)}`;
    const windowed =
      name === 'running_rows'
        ? sql`row_number() OVER w`
        : sql`sum(per_day.${sql.identifier(name.slice('running_'.length))}) OVER w`;
    return sql`${base ? sql`coalesce(base.${sql.identifier(name)}, 0) + ${windowed}` : windowed} AS ${sql.identifier(name)}`;
  });
  return sql`WITH per_day AS MATERIALIZED (${rows})${base ? sql`, base AS (${base})` : sql``}
    SELECT ${sql.join(columns, sql`, `)} FROM per_day
    ${base ? sql`LEFT JOIN base ON base.shop_id = per_day.shop_id` : sql``}
    WINDOW w AS (PARTITION BY per_day.shop_id ORDER BY per_day.day ROWS UNBOUNDED PRECEDING)
    ORDER BY per_day.brand_id, per_day.day, per_day.shop_id`;
}

export async function writeAll(tx: Transaction, cover: Cover): Promise<void> {
  await claimChanges(tx, cover);
  for (const table of [reviewStatsDaily, salesDaily]) {
    await tx.delete(table);
    await tx.insert(table).select(withRunningTotals(table, perDayOf(tx, table, cover, 'all')));
  }
}

/** Rewrites, per claimed shop, every row from its first changed day on; returns the rows written. */
export async function writeChanged(tx: Transaction, cover: Cover, enteringFrom: Date): Promise<number> {
  await claimChanges(tx, cover, enteringFrom);
  let written = 0;
  for (const table of [reviewStatsDaily, salesDaily]) {
    const t = sql.identifier('t');
    const perDayNames = dayColumns(table).map((name) => sql`${t}.${sql.identifier(name)}`);
    const runningNames = names(table)
      .filter((name) => name.startsWith('running_'))
      .map((name) => sql.identifier(name));
    // Rows of the span that no change touched, as stored.
    const kept = sql`SELECT ${sql.join(perDayNames, sql`, `)} FROM ${table} AS ${t}
      JOIN ${claimedShops} ON ${claimedShops.shopId} = ${t}.shop_id AND ${t}.day >= ${claimedShops.fromDay}
      WHERE NOT EXISTS (SELECT 1 FROM ${claimedDays} WHERE ${claimedDays.shopId} = ${t}.shop_id AND ${claimedDays.day} = ${t}.day)`;
    const rows = sql`(${perDayOf(tx, table, cover, 'days')}) UNION ALL (${perDayOf(tx, table, cover, 'shops')}) UNION ALL (${kept})`;
    // A whole shop (from_day null) has no row before its span: no base.
    const base = sql`SELECT ${claimedShops.shopId} AS shop_id, before.* FROM ${claimedShops}
      CROSS JOIN LATERAL (SELECT ${sql.join(runningNames, sql`, `)} FROM ${table} AS ${t}
        WHERE ${t}.shop_id = ${claimedShops.shopId} AND ${t}.day < ${claimedShops.fromDay}
        ORDER BY ${t}.day DESC LIMIT 1) AS before`;
    const next = sql.identifier(`aggregate_next_${table === reviewStatsDaily ? 'review_stats' : 'sales'}`);
    await tx.execute(sql`CREATE TEMPORARY TABLE ${next} ON COMMIT DROP AS ${withRunningTotals(table, rows, base)}`);
    await tx.execute(sql`DELETE FROM ${table} AS ${t} USING ${claimedShops}
      WHERE ${t}.shop_id = ${claimedShops.shopId} AND (${claimedShops.fromDay} IS NULL OR ${t}.day >= ${claimedShops.fromDay})`);
    written += affected(await tx.insert(table).select(sql`SELECT * FROM ${next}`));
  }
  return written;
}

function affected(result: unknown): number {
  const { count, affectedRows } = result as { count?: number; affectedRows?: number };
  return count ?? affectedRows ?? 0;
}

/** Takes the covered change-log rows (a later commit keeps its row); with `enteringFrom`, fills the temp tables. */
async function claimChanges(tx: Transaction, cover: Cover, enteringFrom?: Date): Promise<void> {
  const covered = sql`${aggregateChanges.day} IS NULL OR ${aggregateChanges.day} < ${cover.today}`;
  if (!enteringFrom) {
    await tx.delete(aggregateChanges).where(covered);
    return;
  }
  for (const table of [claimed, claimedShops, claimedDays]) {
    const columns = Object.values(getTableColumns(table)).map(
      (column) => sql`${sql.identifier(column.name)} ${sql.raw(column.getSQLType())}`,
    );
    await tx.execute(sql`CREATE TEMPORARY TABLE ${table} (${sql.join(columns, sql`, `)}) ON COMMIT DROP`);
  }
  // Shops whose link time passed since the previous build enter with their whole history (D-6).
  await tx.execute(sql`WITH taken AS (DELETE FROM ${aggregateChanges} WHERE ${covered} RETURNING shop_id, day)
    INSERT INTO ${claimed} (shop_id, day)
    SELECT shop_id, day FROM taken
    UNION
    SELECT ${shops.id}, NULL FROM ${shops}
    WHERE ${shops.linkedAt} >= ${enteringFrom.toISOString()}::timestamptz
      AND ${shops.linkedAt} < ${kstDayStart(cover.today).toISOString()}::timestamptz`);
  await tx.execute(sql`INSERT INTO ${claimedShops} (shop_id, from_day)
    SELECT shop_id, CASE WHEN bool_or(day IS NULL) THEN NULL ELSE min(day) END FROM ${claimed} GROUP BY shop_id`);
  await tx.execute(sql`INSERT INTO ${claimedDays} (shop_id, day)
    SELECT ${claimed.shopId}, ${claimed.day} FROM ${claimed}
    JOIN ${claimedShops} ON ${claimedShops.shopId} = ${claimed.shopId}
    WHERE ${claimedShops.fromDay} IS NOT NULL`);
  // Temporary tables have no statistics until analyzed, and the build's joins are planned from them.
  await tx.execute(sql`ANALYZE ${claimedShops}, ${claimedDays}`);
}
