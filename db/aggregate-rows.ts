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

// The rows of the daily aggregate (D-6): every day before today anew (full), or only the days the change
// log names (incremental). Both write the same rows for the same data; db/aggregate.ts decides which runs.

export type Transaction = Parameters<Parameters<Db['transaction']>[0]>[0];
type AggregateTable = typeof reviewStatsDaily | typeof salesDaily;

/**
 * What an incremental build works on, in temporary tables of its transaction. `claimedShops`: every shop
 * with a change and the first day it changed, or null when every day of it did (a shop whose brand,
 * platform or link changed, or that enters the aggregate because its link time passed). `claimedDays`:
 * the changed days of the other shops.
 */
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

/** The days a build covers: before `today` (D-6), of shops linked before its start (D-6 too). */
export type Cover = { today: string };

/** Which source rows a per-day select reads: all of them, the claimed days, or the claimed whole shops. */
type Source = 'all' | 'days' | 'shops';

// ---------------------------------------------------------------------------------------------------------
// Per-day rows, named as the aggregate table's columns.

const countWhere = (name: string, condition: SQL) => sql<number>`(count(*) FILTER (WHERE ${condition}))::int`.as(name);
const inBucket = (name: string, bucket: number) => countWhere(name, sql`${reviews.starBucket} = ${bucket}`);

/**
 * The counts of a set of reviews, named as the aggregate's columns. reply_count is the reply state now
 * (D-6); the star buckets are the generated `star_bucket` (rounded down, 0.5 as 1, unrated = 0 in none).
 */
const reviewCounts = () => ({
  reviewCount: sql<number>`count(*)::int`.as('review_count'),
  replyCount: countWhere('reply_count', sql`${reviews.isReplied}`),
  ratingOne: inBucket('rating_one', 1),
  ratingTwo: inBucket('rating_two', 2),
  ratingThree: inBucket('rating_three', 3),
  ratingFour: inBucket('rating_four', 4),
  ratingFive: inBucket('rating_five', 5),
});

/** One row per (shop, KST day) with at least one review: of every shop, or of the claimed whole shops. */
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

/**
 * The rows of the claimed days, each counted by its own read of the day's range of instants on the
 * (shop_id, written_at) index. A lateral aggregate on purpose: as a join, the planner misjudged how many
 * reviews a range of one day holds and hashed every review of the table instead (3 s at 1M reviews for a
 * hundred days, against milliseconds).
 */
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

/**
 * One row per (shop, KST day) with a snapshot; snapshots are already one per shop and day. Only the sales
 * platforms of partner guide § Sales count, so every sales group_by covers the same rows.
 */
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

/**
 * `query` joined to the claimed days or whole shops, or as it is for `all`. The joined tables add no
 * selected column, so the query keeps its type (drizzle types a join as a new selection shape; the cast says
 * only that).
 */
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

// ---------------------------------------------------------------------------------------------------------
// Running totals

const names = (table: AggregateTable) => Object.values(getTableColumns(table)).map(({ name }) => name);
const dayColumns = (table: AggregateTable) => names(table).filter((name) => !name.startsWith('running_'));

/**
 * The rows of one aggregate table from `rows` (one per shop and day, named as the table's per-day columns),
 * with its running totals per shop in day order, this day included (read by db/queries/report.ts):
 * `running_rows` numbers the shop's rows, and every other `running_x` column sums column `x`. `base`
 * (optional, one row per shop, named as the running columns) holds what precedes `rows` of a shop: its
 * totals are added. The select list follows the table's columns, so it lines up with the INSERT's.
 *
 * `rows` is a MATERIALIZED CTE on purpose: inlined, PostgreSQL grouped a million reviews by sorting them
 * (to feed the window's order, under an estimate of a million groups) instead of hashing them and sorting
 * the ~38,000 groups, ~40 % slower at 1M reviews.
 *
 * The rows come in the order of the (brand_id, day) index, which group_by=date and week read: a day's
 * rows of every shop then share a few pages instead of one page each (at 1M, the first page of
 * review-stats by date about twice as fast). The running-total reads probe two rows per shop whatever the order.
 */
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

// ---------------------------------------------------------------------------------------------------------
// Builds

/** Deletes and re-inserts both tables for every day of `cover`; empties the change log of those days. */
export async function writeAll(tx: Transaction, cover: Cover): Promise<void> {
  await claimChanges(tx, cover);
  for (const table of [reviewStatsDaily, salesDaily]) {
    await tx.delete(table);
    await tx.insert(table).select(withRunningTotals(table, perDayOf(tx, table, cover, 'all')));
  }
}

/**
 * Rewrites only what the change log (and the shops whose link time passed since the previous build's
 * day, `enteringFrom`) names: per shop, every row from its first changed day on, since their running totals
 * follow. Changed days are read from the sources; the other rows of that span are the table's own, and the
 * totals start from the shop's last row before the span. Returns the rows written.
 */
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

/** Rows a statement wrote, from either driver's result. */
function affected(result: unknown): number {
  const { count, affectedRows } = result as { count?: number; affectedRows?: number };
  return count ?? affectedRows ?? 0;
}

/**
 * Takes the change log's rows of the covered days out, in this transaction: a write that commits after
 * this statement keeps its row for the next build, and one whose row is taken is visible to every later
 * statement of the build (its row and its data committed together). Days from today on stay for the builds
 * that cover them. With `enteringFrom`, also fills the temporary tables the incremental build reads.
 */
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
