import { desc, getTableName, gte, sql } from 'drizzle-orm';
import { type Cover, type Transaction, writeAll, writeChanged } from './aggregate-rows';
import { type Db, liftRequestBounds } from './client';
import { addDays, kstDayStart, kstToday } from './kst';
import { aggregateRuns, reviewStatsDaily, salesDaily } from './schema';

// The daily aggregate of D-6: review-stats and sales read only what this job writes.

/** The advisory lock that serializes runs across instances and the CLI (D-6); no other code may use this key. */
export const AGGREGATE_LOCK_KEY = 4_807_202_604;

export type AggregateResult = {
  throughDay: string;
  /** `full`: every row rewritten; `incremental`: the rows of what changed since the previous build (D-6). */
  kind: 'full' | 'incremental';
  writtenRows: number;
  /** Counted by a full build only: counting reads whole tables, and an incremental build's cost follows the changes. */
  reviewRows?: number;
  salesRows?: number;
};

/** `full`: rebuild everything even when an incremental build could run (npm run aggregate -- --full). */
export type BuildOptions = { now: Date; full?: boolean };

/** Builds every KST day before today of `now` in one transaction, waiting for the advisory lock (D-6). */
export async function buildDailyAggregate(db: Db, options: BuildOptions): Promise<AggregateResult> {
  const result = await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${AGGREGATE_LOCK_KEY})`);
    return build(tx, options);
  });
  await compact(db, result);
  return result;
}

/** Autovacuum's rule, applied by the job itself: this machine's PostgreSQL and PGlite run no autovacuum. */
const MAINTAIN_SHARE = 0.1;

/** Keeps the tables about one build's size, after the commit (VACUUM cannot run in a transaction). */
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

export type DailyRun = { outcome: 'built'; result: AggregateResult } | { outcome: 'covered' } | { outcome: 'busy' };

/** The schedule's run (D-6): one of many instances takes the lock without waiting; on `busy` the schedule retries. */
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
    await liftRequestBounds(tx);
    return { outcome: 'built', result: await build(tx, options) };
  });
  if (run.outcome === 'built') await compact(db, run.result);
  return run;
}

/** Incremental after a previous build that kept the change log, unless asked for full or the clock went back. */
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
    // Shops linked since the previous build's cover enter now (D-6).
    written = { writtenRows: await writeChanged(tx, cover, kstDayStart(addDays(previous.throughDay, 1))) };
  } else {
    await writeAll(tx, cover);
    const reviewRows = await tx.$count(reviewStatsDaily);
    const salesRows = await tx.$count(salesDaily);
    written = { writtenRows: reviewRows + salesRows, reviewRows, salesRows };
    // Planner statistics for what was rewritten (no autovacuum here); an incremental build leaves it to compact.
    await tx.execute(sql`ANALYZE ${reviewStatsDaily}, ${salesDaily}`);
  }
  const kind = incremental ? 'incremental' : 'full';
  await tx.insert(aggregateRuns).values({ throughDay, startedAt, finishedAt: new Date(), kind });
  return { throughDay, kind, ...written };
}
