import { desc, getTableName, gte, sql } from 'drizzle-orm';
import { type Cover, type Transaction, writeAll, writeChanged } from './aggregate-rows';
import type { Db } from './client';
import { addDays, kstDayStart, kstToday } from './kst';
import { aggregateRuns, reviewStatsDaily, salesDaily } from './schema';

// The daily aggregate of D-6: review-stats and sales read only what this job writes.

/**
 * Key of the advisory lock that serializes runs across every instance and the CLI (D-6). Arbitrary, but
 * no other code of the service may take an advisory lock with the same key.
 */
export const AGGREGATE_LOCK_KEY = 4_807_202_604;

export type AggregateResult = {
  /** The last KST day included: the day before "today" of `now`. */
  throughDay: string;
  /** `full`: every row rewritten; `incremental`: the rows of what changed since the previous build (D-6). */
  kind: 'full' | 'incremental';
  /** Rows the build wrote (every row of a full build; the rows from each changed shop's first changed day on). */
  writtenRows: number;
  /**
   * The tables' rows, counted by a full build only: counting reads the whole tables, whose size follows
   * the history (shops × days), and an incremental build's time follows the days changed.
   */
  reviewRows?: number;
  salesRows?: number;
};

/** `full`: rebuild everything even when an incremental build could run (npm run aggregate -- --full). */
export type BuildOptions = { now: Date; full?: boolean };

/**
 * Builds `review_stats_daily` and `sales_daily` for every KST day before today (of `now`), in one
 * transaction: incrementally when it can, else in full (D-6). Idempotent: a rerun with the same data and
 * clock leaves the same rows. It waits for the advisory transaction lock, so concurrent runs (the CLI
 * beside a server's scheduled run) wait for each other instead of interleaving; the lock is released with
 * the transaction. Works on PGlite (one connection) and postgres.js alike.
 */
export async function buildDailyAggregate(db: Db, options: BuildOptions): Promise<AggregateResult> {
  const result = await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${AGGREGATE_LOCK_KEY})`);
    return build(tx, options);
  });
  await compact(db, result);
  return result;
}

/**
 * After an incremental build, a table is vacuumed once its dead rows, and analyzed once the rows changed
 * since its last ANALYZE, pass this share of its live rows: the rule autovacuum applies, applied by the
 * job itself since this machine's PostgreSQL (and PGlite) run no autovacuum.
 */
const MAINTAIN_SHARE = 0.1;

/**
 * Makes the space of the rows a build replaced reusable (VACUUM), so the tables and their indexes stay
 * about one build's size (at most two builds' pages: the old rows are still live while the new ones go in)
 * instead of growing with every run where autovacuum is off or slow (PGlite has none). After a full build
 * always; after an incremental one by MAINTAIN_SHARE, counting this build's rows and earlier ones', so a
 * day's small build does not pay for a pass over the whole history and enough of them do. VACUUM cannot
 * run inside a transaction, so it follows the commit, after the advisory lock is released: a run that
 * starts meanwhile only delays it, and what a concurrent reader's snapshot still sees is reclaimed by a
 * later run. A plain VACUUM or ANALYZE takes no lock that blocks readers or another build.
 */
async function compact(db: Db, result: AggregateResult): Promise<void> {
  if (result.kind === 'full') {
    await db.execute(sql`VACUUM ${reviewStatsDaily}, ${salesDaily}`);
    return;
  }
  for (const table of [reviewStatsDaily, salesDaily]) {
    const [stats] = await db
      .select({
        dead: sql<number>`coalesce(n_dead_tup, 0)::float8`,
        changed: sql<number>`coalesce(n_mod_since_analyze, 0)::float8`,
        live: sql<number>`greatest(coalesce(n_live_tup, 0), 1)::float8`,
      })
      .from(sql`pg_stat_user_tables`)
      .where(sql`relid = ${getTableName(table)}::regclass`);
    if (!stats) continue;
    const vacuum = stats.dead > MAINTAIN_SHARE * stats.live;
    const analyze = stats.changed > MAINTAIN_SHARE * stats.live;
    if (vacuum || analyze)
      await db.execute(sql`${sql.raw(vacuum ? (analyze ? 'VACUUM (ANALYZE)' : 'VACUUM') : 'ANALYZE')} ${table}`);
  }
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
    // The server's sessions bound statements, lock waits and idle transactions below the request deadline
    // (D-20); the rebuild is no request and takes seconds at a million reviews, so its transaction lifts
    // those for itself alone.
    for (const setting of ['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout'])
      await tx.execute(sql`SELECT set_config(${setting}, '0', true)`);
    return { outcome: 'built', result: await build(tx, options) };
  });
  // Under the server's statement timeout: VACUUM of tables the size of one build is quick. One that fails
  // fails the run like any error (the schedule's retry then finds the day covered), and the next
  // rebuild's VACUUM reclaims what it left.
  if (run.outcome === 'built') await compact(db, run.result);
  return run;
}

/**
 * Builds every KST day before today of `now`; the caller holds the lock. Incremental (db/aggregate-rows.ts)
 * after a previous build that kept the change log, unless asked for full or the clock went back; full
 * otherwise, and on an empty aggregate.
 */
async function build(tx: Transaction, options: BuildOptions): Promise<AggregateResult> {
  const cover: Cover = { today: kstToday(options.now) };
  const throughDay = addDays(cover.today, -1);
  const startedAt = new Date();
  const [previous] = await tx
    .select({ throughDay: aggregateRuns.throughDay, kind: aggregateRuns.kind })
    .from(aggregateRuns)
    .orderBy(desc(aggregateRuns.id))
    .limit(1);
  const [built] = await tx
    .select({ any: sql<boolean>`EXISTS (SELECT 1 FROM ${reviewStatsDaily}) OR EXISTS (SELECT 1 FROM ${salesDaily})` })
    .from(sql`(SELECT 1) AS one`);
  const incremental =
    !options.full && previous?.kind != null && previous.throughDay <= throughDay && built?.any === true;

  let written: Pick<AggregateResult, 'writtenRows' | 'reviewRows' | 'salesRows'>;
  if (incremental && previous) {
    // The previous build covered days before the day after its throughDay: shops linked from then on
    // were left out by it (D-6) and enter now if linked before today.
    written = { writtenRows: await writeChanged(tx, cover, kstDayStart(addDays(previous.throughDay, 1))) };
  } else {
    await writeAll(tx, cover);
    const reviewRows = await tx.$count(reviewStatsDaily);
    const salesRows = await tx.$count(salesDaily);
    written = { writtenRows: reviewRows + salesRows, reviewRows, salesRows };
  }

  // Fresh planner statistics for what was rewritten: this machine's PostgreSQL (and PGlite) run no
  // autovacuum, and stale estimates turn 366-day reports into bad plans. ANALYZE may run inside the
  // transaction; the rows it samples are this transaction's. An incremental build leaves it to compact:
  // it samples pages across the whole history, and a day's rows barely move the statistics.
  if (!incremental) await tx.execute(sql`ANALYZE ${reviewStatsDaily}, ${salesDaily}`);

  const kind = incremental ? 'incremental' : 'full';
  // started/finished are wall-clock times for operators; what the run covered is throughDay.
  await tx.insert(aggregateRuns).values({ throughDay, startedAt, finishedAt: new Date(), kind });
  return { throughDay, kind, ...written };
}
