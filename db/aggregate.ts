import { and, eq, getTableColumns, gte, inArray, lt, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Db } from './client';
import { addDays, kstDayOf, kstDayStart, kstToday } from './kst';
import { aggregateRuns, reviewStatsDaily, reviews, SALES_PLATFORMS, salesDaily, salesSnapshots, shops } from './schema';

// The daily aggregate of D-6: review-stats and sales read only what this job writes.

/**
 * Key of the advisory lock that serializes runs across every instance and the CLI (D-6). Arbitrary, but
 * no other code of the service may take an advisory lock with the same key.
 */
export const AGGREGATE_LOCK_KEY = 4_807_202_604;

export type AggregateResult = {
  /** The last KST day included: the day before "today" of `now`. */
  throughDay: string;
  reviewRows: number;
  salesRows: number;
};

/**
 * Rebuilds `review_stats_daily` and `sales_daily` for every KST day before today (of `now`), in one
 * transaction: delete everything, re-insert by INSERT … SELECT … GROUP BY. Idempotent: a rerun with the
 * same data and clock writes the same rows. It waits for the advisory transaction lock, so concurrent
 * runs (the CLI beside a server's scheduled run) wait for each other instead of interleaving; the lock is
 * released with the transaction. Works on PGlite (one connection) and postgres.js alike.
 */
export async function buildDailyAggregate(db: Db, options: { now: Date }): Promise<AggregateResult> {
  const result = await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${AGGREGATE_LOCK_KEY})`);
    return rebuild(tx, options.now);
  });
  await compact(db);
  return result;
}

/**
 * Makes the space of the rows a rebuild replaced reusable (VACUUM), so the tables and their indexes stay
 * about one build's size (at most two builds' pages: the old rows are still live while the new ones go in)
 * instead of growing with every run where autovacuum is off or slow (PGlite has none). VACUUM cannot run
 * inside a transaction, so it follows the commit, after the advisory lock is released: a run that starts
 * meanwhile only delays it, and what a concurrent reader's snapshot still sees is reclaimed by the next
 * run. A plain VACUUM takes no lock that blocks readers or another rebuild.
 */
async function compact(db: Db): Promise<void> {
  await db.execute(sql`VACUUM ${reviewStatsDaily}, ${salesDaily}`);
}

/** What a scheduled run did: built, found yesterday already covered, or found another run under way. */
export type DailyRun = { outcome: 'built'; result: AggregateResult } | { outcome: 'covered' } | { outcome: 'busy' };

/**
 * The daily run of the schedule (D-6): of many instances, one rebuilds. It takes the lock without waiting
 * and skips when a run already covered yesterday, so instances that wake a little later do not rebuild
 * again. `busy` (another run holds the lock) is not `covered`: the schedule retries until it is.
 */
export async function runDailyAggregate(db: Db, options: { now: Date }): Promise<DailyRun> {
  const throughDay = addDays(kstToday(options.now), -1);
  const run = await db.transaction(async (tx): Promise<DailyRun> => {
    const [lock] = await tx
      .select({ acquired: sql<boolean>`pg_try_advisory_xact_lock(${AGGREGATE_LOCK_KEY})` })
      .from(sql`(SELECT 1) AS one`);
    if (!lock?.acquired) return { outcome: 'busy' };
    const [done] = await tx
      .select({ id: aggregateRuns.id })
      .from(aggregateRuns)
      .where(gte(aggregateRuns.throughDay, throughDay))
      .limit(1);
    if (done) return { outcome: 'covered' };
    // The server's sessions cut statements off below the request deadline (D-20); the rebuild is no
    // request and takes seconds at a million reviews, so its transaction lifts that for itself alone.
    await tx.execute(sql`SET LOCAL statement_timeout = 0`);
    return { outcome: 'built', result: await rebuild(tx, options.now) };
  });
  // Under the server's statement timeout: VACUUM of tables the size of one build is quick. One that fails
  // fails the run like any error (the schedule's retry then finds the day covered), and the next
  // rebuild's VACUUM reclaims what it left.
  if (run.outcome === 'built') await compact(db);
  return run;
}

type Transaction = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * The rows of one aggregate table, `perDay` (one per shop and day, named as the table's columns), with
 * its running totals per shop in day order, this day included (read by db/queries/report.ts):
 * `running_rows` numbers the shop's rows, and every other `running_x` column sums column `x`. The select
 * list follows the table's columns, so it lines up with the INSERT's column list.
 *
 * `perDay` is a MATERIALIZED CTE on purpose: inlined, PostgreSQL grouped a million reviews by sorting them
 * (to feed the window's order, under an estimate of a million groups) instead of hashing them and sorting
 * the ~38,000 groups, ~40 % slower at 1M reviews.
 *
 * The rows go in in the order of the (brand_id, day) index, which group_by=date and week read: a day's
 * rows of every shop then share a few pages instead of one page each (at 1M, the first page of
 * review-stats by date about twice as fast). The running-total reads probe two rows per shop whatever the order.
 */
function withRunningTotals(table: typeof reviewStatsDaily | typeof salesDaily, perDay: SQLWrapper): SQL {
  const columns = Object.values(getTableColumns(table)).map(({ name }) => {
    if (name === 'running_rows') return sql`row_number() OVER w`;
    if (name.startsWith('running_')) return sql`sum(${sql.identifier(name.slice('running_'.length))}) OVER w`;
    return sql.identifier(name);
  });
  return sql`WITH per_day AS MATERIALIZED (${perDay})
    SELECT ${sql.join(columns, sql`, `)} FROM per_day
    WINDOW w AS (PARTITION BY shop_id ORDER BY day ROWS UNBOUNDED PRECEDING)
    ORDER BY brand_id, day, shop_id`;
}

/** Deletes and re-inserts both tables for every KST day before today of `now`; the caller holds the lock. */
async function rebuild(tx: Transaction, now: Date): Promise<AggregateResult> {
  const today = kstToday(now);
  const throughDay = addDays(today, -1);
  // Days before today only (D-6); shops linked today or later wait for tomorrow's run
  // (D-6 too). Both are one instant: the start of today in KST.
  const todayStart = kstDayStart(today);
  const linkedBeforeToday = lt(shops.linkedAt, todayStart);
  const startedAt = new Date();
  await tx.delete(reviewStatsDaily);
  await tx.delete(salesDaily);

  // One row per (shop, KST day) with at least one review. reply_count is the reply state now (D-6);
  // the star buckets are the generated `star_bucket` (rounded down, 0.5 as 1, unrated = 0 in none).
  // Every column carries the name of its target column (withRunningTotals reads them by name and adds the
  // running totals).
  const day = kstDayOf(reviews.writtenAt);
  const countWhere = (name: string, condition: SQL) =>
    sql<number>`(count(*) FILTER (WHERE ${condition}))::int`.as(name);
  const inBucket = (name: string, bucket: number) => countWhere(name, sql`${reviews.starBucket} = ${bucket}`);
  await tx.insert(reviewStatsDaily).select(
    withRunningTotals(
      reviewStatsDaily,
      tx
        .select({
          shopId: reviews.shopId,
          day: day.as('day'),
          brandId: shops.brandId,
          reviewCount: sql<number>`count(*)::int`.as('review_count'),
          replyCount: countWhere('reply_count', sql`${reviews.isReplied}`),
          ratingOne: inBucket('rating_one', 1),
          ratingTwo: inBucket('rating_two', 2),
          ratingThree: inBucket('rating_three', 3),
          ratingFour: inBucket('rating_four', 4),
          ratingFive: inBucket('rating_five', 5),
        })
        .from(reviews)
        .innerJoin(shops, eq(shops.id, reviews.shopId))
        .where(and(lt(reviews.writtenAt, todayStart), linkedBeforeToday))
        .groupBy(reviews.shopId, shops.brandId, day),
    ),
  );

  // One row per (shop, KST day) with a snapshot; snapshots are already one per shop and day. Only the
  // sales platforms of partner guide § Sales count, so every sales group_by covers the same rows; the running totals
  // are over these rows only.
  await tx.insert(salesDaily).select(
    withRunningTotals(
      salesDaily,
      tx
        .select({
          shopId: salesSnapshots.shopId,
          day: salesSnapshots.day,
          brandId: shops.brandId,
          salesAmount: sql<number>`${salesSnapshots.amount}`.as('sales_amount'),
        })
        .from(salesSnapshots)
        .innerJoin(shops, eq(shops.id, salesSnapshots.shopId))
        .where(and(lt(salesSnapshots.day, today), linkedBeforeToday, inArray(shops.platform, SALES_PLATFORMS))),
    ),
  );

  // Fresh planner statistics for what was just rewritten: this machine's PostgreSQL (and PGlite) run no
  // autovacuum, and stale estimates turn 366-day reports into bad plans. ANALYZE may run inside
  // the transaction; the rows it samples are this transaction's.
  await tx.execute(sql`ANALYZE ${reviewStatsDaily}, ${salesDaily}`);

  const reviewRows = await tx.$count(reviewStatsDaily);
  const salesRows = await tx.$count(salesDaily);
  // started/finished are wall-clock times for operators; what the run covered is throughDay.
  await tx.insert(aggregateRuns).values({ throughDay, startedAt, finishedAt: new Date() });
  return { throughDay, reviewRows, salesRows };
}
