import { and, asc, eq, getTableName, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { AGGREGATE_LOCK_KEY, buildDailyAggregate, runDailyAggregate } from '../db/aggregate';
import { type DatabaseHandle, openDatabase } from '../db/client';
import {
  addDays,
  kstDay,
  kstDayOf,
  kstDayStart,
  kstTimestamp,
  kstTimestampOf,
  kstToday,
  mondayOf,
  mondayOfDay,
} from '../db/kst';
import {
  aggregateRuns,
  reviewStatsDaily,
  reviews,
  SALES_PLATFORMS,
  salesDaily,
  salesSnapshots,
  shops,
} from '../db/schema';
import { nextRunAt, scheduleDailyAggregate } from '../server/aggregate-schedule';
import { createLogger } from '../server/logger';
import { aggregateRows } from './support/aggregate';
import { DRIVER, NOW, openTestDatabase } from './support/database';
import { withDatabase } from './support/global-setup';
import { keptLog } from './support/kept-log';

// D-6: the daily aggregate job. Every test works on its own copy of the template, since the job rewrites
// the aggregate tables (and some tests add rows it must leave out).

const TODAY = kstToday(NOW);
const YESTERDAY = addDays(TODAY, -1);
/** The first daily run whose yesterday is TODAY: 00:05 KST tomorrow, even for a run started 00:00–00:05 KST. */
const FIRST_RUN_AFTER_TODAY = nextRunAt(kstDayStart(addDays(TODAY, 1)));
const LINKED_TODAY = '10999001'; // chicken-house, BAEMIN, linked at 00:00 KST today (D-6)

type Db = DatabaseHandle['db'];

/**
 * The aggregate D-6 asks for, counted in JS from the reviews and snapshots, independently of the job's
 * SQL: KST days from kstDay, rounded-down buckets with 0.5 as one and unrated in none, REPLIED as
 * POSTED/OWNER_DIRECT (D-7), days before today only, shops linked before today only,
 * sales platforms only.
 */
async function expectedRows(db: Db, now: Date) {
  const todayStart = kstDayStart(kstToday(now)).getTime();
  const shopRows = await db
    .select({ id: shops.id, brandId: shops.brandId, platform: shops.platform, linkedAt: shops.linkedAt })
    .from(shops);
  const counted = new Map(shopRows.filter((shop) => shop.linkedAt.getTime() < todayStart).map((s) => [s.id, s]));

  const stats = new Map<string, typeof reviewStatsDaily.$inferSelect>();
  const reviewRows = await db
    .select({ shopId: reviews.shopId, writtenAt: reviews.writtenAt, rating: reviews.rating, state: reviews.replyState })
    .from(reviews);
  for (const review of reviewRows) {
    const shop = counted.get(review.shopId);
    if (!shop || review.writtenAt.getTime() >= todayStart) continue;
    const day = kstDay(review.writtenAt);
    const key = `${shop.id}|${day}`;
    const row = stats.get(key) ?? {
      shopId: shop.id,
      day,
      brandId: shop.brandId,
      reviewCount: 0,
      replyCount: 0,
      ratingOne: 0,
      ratingTwo: 0,
      ratingThree: 0,
      ratingFour: 0,
      ratingFive: 0,
      runningRows: 0,
      runningReviewCount: 0,
      runningReplyCount: 0,
      runningRatingOne: 0,
      runningRatingTwo: 0,
      runningRatingThree: 0,
      runningRatingFour: 0,
      runningRatingFive: 0,
    };
    row.reviewCount++;
    if (review.state === 'POSTED' || review.state === 'OWNER_DIRECT') row.replyCount++;
    const bucket = review.rating === null ? 0 : Math.max(1, Math.floor(review.rating));
    const field = (['', 'ratingOne', 'ratingTwo', 'ratingThree', 'ratingFour', 'ratingFive'] as const)[bucket];
    if (field) row[field]++;
    stats.set(key, row);
  }

  const salesPlatforms: readonly string[] = SALES_PLATFORMS;
  const snapshots = await db.select().from(salesSnapshots);
  const sales = snapshots
    .filter((snapshot) => {
      const shop = counted.get(snapshot.shopId);
      return shop && salesPlatforms.includes(shop.platform) && snapshot.day < kstToday(now);
    })
    .map((snapshot) => ({
      shopId: snapshot.shopId,
      day: snapshot.day,
      brandId: counted.get(snapshot.shopId)?.brandId,
      salesAmount: snapshot.amount,
      runningRows: 0,
      runningSalesAmount: 0,
    }));

  const byShopAndDay = (a: { shopId: number; day: string }, b: { shopId: number; day: string }) =>
    a.shopId - b.shopId || a.day.localeCompare(b.day);
  const statsRows = [...stats.values()].sort(byShopAndDay);
  sales.sort(byShopAndDay);
  // The running totals: per shop in day order, the row itself included.
  statsRows.forEach((row, index) => {
    const previous = statsRows[index - 1]?.shopId === row.shopId ? statsRows[index - 1] : undefined;
    row.runningRows = (previous?.runningRows ?? 0) + 1;
    row.runningReviewCount = (previous?.runningReviewCount ?? 0) + row.reviewCount;
    row.runningReplyCount = (previous?.runningReplyCount ?? 0) + row.replyCount;
    row.runningRatingOne = (previous?.runningRatingOne ?? 0) + row.ratingOne;
    row.runningRatingTwo = (previous?.runningRatingTwo ?? 0) + row.ratingTwo;
    row.runningRatingThree = (previous?.runningRatingThree ?? 0) + row.ratingThree;
    row.runningRatingFour = (previous?.runningRatingFour ?? 0) + row.ratingFour;
    row.runningRatingFive = (previous?.runningRatingFive ?? 0) + row.ratingFive;
  });
  sales.forEach((row, index) => {
    const previous = sales[index - 1]?.shopId === row.shopId ? sales[index - 1] : undefined;
    row.runningRows = (previous?.runningRows ?? 0) + 1;
    row.runningSalesAmount = (previous?.runningSalesAmount ?? 0) + row.salesAmount;
  });
  return { stats: statsRows, sales };
}

describe('the rows of a run (D-6)', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase();
  });

  it('are the per-(shop, KST day) counts of the reviews and the snapshots, for days before today', async () => {
    // The template was aggregated with NOW in the global setup.
    const rows = await aggregateRows(database.db);
    expect(rows).toEqual(await expectedRows(database.db, NOW));
    expect(rows.stats.length).toBeGreaterThan(1000);
    expect(rows.sales.length).toBeGreaterThan(1000);
    expect(rows.stats.every((row) => row.day < TODAY) && rows.sales.every((row) => row.day < TODAY)).toBe(true);
    // Yesterday is there: "before today" is not "before yesterday".
    expect(rows.stats.some((row) => row.day === YESTERDAY) && rows.sales.some((row) => row.day === YESTERDAY)).toBe(
      true,
    );
  });

  it('are the same, run after run, and each run is recorded', async () => {
    const before = await aggregateRows(database.db);
    const runs = await database.db.$count(aggregateRuns);
    for (let run = 0; run < 2; run++) {
      expect(await buildDailyAggregate(database.db, { now: NOW, full: run === 0 })).toEqual({
        throughDay: YESTERDAY,
        kind: run === 0 ? 'full' : 'incremental',
        writtenRows: run === 0 ? before.stats.length + before.sales.length : 0,
        // Counted by a full build only (D-6: an incremental build's time follows the days changed).
        ...(run === 0 && { reviewRows: before.stats.length, salesRows: before.sales.length }),
      });
      expect(await aggregateRows(database.db)).toEqual(before);
    }
    const recorded = await database.db.select().from(aggregateRuns).orderBy(asc(aggregateRuns.id));
    expect(recorded).toHaveLength(runs + 2);
    expect(recorded.at(-1)?.throughDay).toBe(YESTERDAY);
  });

  it('of two concurrent runs, one waits for the other: no duplicate, the same totals', async () => {
    const before = await aggregateRows(database.db);
    // On PostgreSQL through a second pool, so the runs really are two sessions; PGlite has one connection.
    const other = DRIVER === 'postgres' ? await openSameDatabase(database) : database;
    try {
      const results = await Promise.all([
        buildDailyAggregate(database.db, { now: NOW }),
        buildDailyAggregate(other.db, { now: NOW }),
      ]);
      expect(results[0]).toEqual(results[1]);
    } finally {
      if (other !== database) await other.close();
    }
    expect(await aggregateRows(database.db)).toEqual(before);
    const [duplicates] = await database.rows<{ stats: number; sales: number }>(sql`
      SELECT (SELECT count(*) - count(DISTINCT (shop_id, day)) FROM review_stats_daily)::int AS stats,
             (SELECT count(*) - count(DISTINCT (shop_id, day)) FROM sales_daily)::int AS sales`);
    expect(duplicates).toEqual({ stats: 0, sales: 0 });
    // The lock serialized them: the second started only after the first had finished.
    const [first, second] = await database.db
      .select()
      .from(aggregateRuns)
      .orderBy(asc(aggregateRuns.startedAt))
      .then((runs) => runs.slice(-2));
    expect(second?.startedAt.getTime()).toBeGreaterThanOrEqual(first?.finishedAt.getTime() ?? Number.NaN);
  });

  // PGlite has one connection: nothing can hold the lock beside the job there.
  it.skipIf(DRIVER !== 'postgres')(
    'waits while another session holds the lock (the key is the one taken)',
    async () => {
      const holder = await openSameDatabase(database);
      let built = false;
      let run: Promise<void> | undefined;
      try {
        await holder.db.transaction(async (tx) => {
          await tx.execute(sql`SELECT pg_advisory_xact_lock(${AGGREGATE_LOCK_KEY})`);
          run = buildDailyAggregate(database.db, { now: NOW }).then(() => {
            built = true;
          });
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(built).toBe(false);
        });
        await run;
        expect(built).toBe(true);
      } finally {
        await holder.close();
      }
    },
  );
});

describe('the tables a run leaves (D-6)', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase();
  });

  /** Bytes of both aggregate tables with their indexes and TOAST. */
  async function aggregateBytes(): Promise<number> {
    const [size] = await database.rows<{ bytes: string }>(sql`
      SELECT (pg_total_relation_size(${getTableName(reviewStatsDaily)}::regclass)
            + pg_total_relation_size(${getTableName(salesDaily)}::regclass))::text AS bytes`);
    return Number(size?.bytes);
  }

  it('stay compact rebuild after rebuild, with autovacuum off, and equal an independent build', async () => {
    // No autovacuum to rely on (it is off on some servers, and PGlite has none): the run compacts itself.
    for (const table of [reviewStatsDaily, salesDaily])
      await database.db.execute(sql`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    await buildDailyAggregate(database.db, { now: NOW, full: true });
    const afterOne = await aggregateBytes();
    for (let run = 0; run < 11; run++) await buildDailyAggregate(database.db, { now: NOW, full: true });
    // A rebuild writes every row anew, so the tables may hold up to two builds' pages, more for a run whose
    // VACUUM found the rows still visible to an older snapshot; never a build's worth more per run.
    expect(await aggregateBytes()).toBeLessThanOrEqual(afterOne * 2.5);
    expect(await aggregateRows(database.db)).toEqual(await expectedRows(database.db, NOW));
  });
});

describe('what a run leaves out', () => {
  let database: DatabaseHandle;
  let linkedToday: number;
  beforeAll(async () => {
    database = await openTestDatabase();
    const [shop] = await database.db
      .select({ id: shops.id, brandId: shops.brandId })
      .from(shops)
      .where(and(eq(shops.platform, 'BAEMIN'), eq(shops.platformShopId, LINKED_TODAY)));
    if (!shop) throw new Error('demo data: the shop linked today is missing');
    linkedToday = shop.id;
    // History the platform handed over when the shop was linked today: a review and a snapshot of
    // yesterday. And a snapshot on a platform without sales (NAVER), which the sales read never covers.
    await database.db.insert(reviews).values({
      reviewCode: 'R-BACKFILL-1',
      brandId: shop.brandId,
      shopId: shop.id,
      writtenAt: new Date(kstDayStart(YESTERDAY).getTime() + 12 * 3_600_000),
      rating: 4,
    });
    await database.db.insert(salesSnapshots).values({ shopId: shop.id, day: YESTERDAY, amount: 123_000 });
    const [naver] = await database.db.select({ id: shops.id }).from(shops).where(eq(shops.platform, 'NAVER')).limit(1);
    if (!naver) throw new Error('demo data: no NAVER shop');
    await database.db.insert(salesSnapshots).values({ shopId: naver.id, day: YESTERDAY, amount: 5_000 });
  });

  it('leaves out today, shops linked today (D-6) and platforms without sales', async () => {
    await buildDailyAggregate(database.db, { now: NOW });
    const rows = await aggregateRows(database.db);
    expect(rows).toEqual(await expectedRows(database.db, NOW));
    expect(rows.stats.filter((row) => row.shopId === linkedToday)).toEqual([]);
    expect(rows.sales.filter((row) => row.shopId === linkedToday)).toEqual([]);
    expect(rows.stats.some((row) => row.day >= TODAY) || rows.sales.some((row) => row.day >= TODAY)).toBe(false);
    expect(rows.sales.some((row) => row.salesAmount === 5_000 && row.day === YESTERDAY)).toBe(false);
  });

  it('takes them in the next day: its history, and the day it was linked', async () => {
    const tomorrow = new Date(NOW.getTime() + 24 * 3_600_000);
    expect(await buildDailyAggregate(database.db, { now: tomorrow })).toMatchObject({ throughDay: TODAY });
    const rows = await aggregateRows(database.db);
    expect(rows).toEqual(await expectedRows(database.db, tomorrow));
    const days = (list: { shopId: number; day: string }[]) =>
      list.filter((row) => row.shopId === linkedToday).map((row) => row.day);
    expect(days(rows.stats)).toEqual([YESTERDAY, TODAY]);
    expect(days(rows.sales)).toEqual([YESTERDAY, TODAY]);
  });
});

describe('the daily schedule (D-6)', () => {
  it('runs at 00:05 KST: the next one strictly after now', () => {
    // 15:00Z is KST midnight.
    expect(nextRunAt(new Date('2026-11-21T14:59:59Z')).toISOString()).toBe('2026-11-21T15:05:00.000Z');
    expect(nextRunAt(new Date('2026-11-21T15:04:59.999Z')).toISOString()).toBe('2026-11-21T15:05:00.000Z');
    expect(nextRunAt(new Date('2026-11-21T15:05:00Z')).toISOString()).toBe('2026-11-22T15:05:00.000Z');
    expect(nextRunAt(new Date('2026-12-31T16:00:00Z')).toISOString()).toBe('2027-01-01T15:05:00.000Z');
  });

  it('builds the aggregate through yesterday when the time comes, logs it, and stops on demand', async () => {
    const database = await openTestDatabase();
    const { lines, log, written } = keptLog();
    // A clock 100 ms before 00:05 KST tomorrow.
    const shift = FIRST_RUN_AFTER_TODAY.getTime() - 100 - Date.now();
    const schedule = scheduleDailyAggregate({ db: database.db, log, now: () => new Date(Date.now() + shift) });
    await written('daily aggregate built');
    await schedule.stop();
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ msg: 'daily aggregate built', throughDay: TODAY });
    const [last] = await database.db.select().from(aggregateRuns).orderBy(sql`${aggregateRuns.id} DESC`).limit(1);
    expect(last?.throughDay).toBe(TODAY);
  });

  it('of instances that wake together, one builds and the others skip (D-6)', async () => {
    const database = await openTestDatabase();
    const tomorrow = new Date(FIRST_RUN_AFTER_TODAY.getTime() + 1_000); // 00:05:01 KST: yesterday is today
    const runs = async () => (await database.db.select({ id: aggregateRuns.id }).from(aggregateRuns)).length;
    const before = await runs();
    const results = await Promise.all([0, 1, 2].map(() => runDailyAggregate(database.db, { now: tomorrow })));
    expect(results.filter((run) => run.outcome === 'built')).toHaveLength(1);
    expect(await runs()).toBe(before + 1);
    // and one waking later finds yesterday covered
    expect(await runDailyAggregate(database.db, { now: new Date(tomorrow.getTime() + 60_000) })).toEqual({
      outcome: 'covered',
    });
    expect(await runs()).toBe(before + 1);
  });

  it.skipIf(DRIVER === 'pglite')(
    'retries a run that found another under way until yesterday is covered (no lost day)',
    async () => {
      const database = await openTestDatabase();
      const template = inject('postgresTemplate');
      if (!template) throw new Error('PostgreSQL only');
      const tomorrow = new Date(FIRST_RUN_AFTER_TODAY.getTime() + 1_000);
      // Another session holds the job's lock, as a long CLI run would.
      const name = (await database.rows<{ name: string }>(sql`SELECT current_database() AS name`))[0]?.name ?? '';
      const holder = await openDatabase({ url: withDatabase(template.url, name), maxConnections: 1 });
      let release: () => void = () => {};
      let locked: () => void = () => {};
      const taken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const held = holder.db.transaction(async (tx) => {
        await tx.execute(sql`SELECT pg_advisory_xact_lock(${AGGREGATE_LOCK_KEY})`);
        locked();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      await taken;
      const { log, written } = keptLog();
      const schedule = scheduleDailyAggregate({ db: database.db, log, now: () => tomorrow, retryMs: 100 });
      await written('under way elsewhere');
      release();
      await held;
      await holder.close();
      await written('daily aggregate built');
      await schedule.stop();
      const [last] = await database.db.select().from(aggregateRuns).orderBy(sql`${aggregateRuns.id} DESC`).limit(1);
      expect(last?.throughDay).toBe(TODAY);
    },
  );

  it('does not run once stopped', async () => {
    const database = await openTestDatabase();
    const lines: string[] = [];
    const shift = FIRST_RUN_AFTER_TODAY.getTime() - 50 - Date.now();
    const schedule = scheduleDailyAggregate({
      db: database.db,
      log: createLogger('info', (line) => lines.push(line)),
      now: () => new Date(Date.now() + shift),
    });
    await schedule.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines).toEqual([]);
  });
});

describe('the KST rules in SQL agree with db/kst.ts (D-5)', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase();
  });

  it('kstDayOf: the day turns at 15:00:00Z, whatever the session time zone', async () => {
    const instants = ['2026-11-21T14:59:59Z', '2026-11-21T15:00:00Z', '2026-12-31T15:00:00Z', '2028-02-28T15:30:00Z'];
    for (const zone of ['UTC', 'America/New_York', 'Asia/Seoul']) {
      const days = await database.db.transaction(async (tx) => {
        await tx.execute(sql.raw(`SET LOCAL TIME ZONE '${zone}'`));
        return Promise.all(
          instants.map(async (instant) => {
            const [row] = await tx.select({ day: kstDayOf(sql`${instant}::timestamptz`) }).from(sql`(SELECT 1) AS one`);
            return row?.day;
          }),
        );
      });
      expect(days).toEqual(instants.map((instant) => kstDay(new Date(instant))));
    }
  });

  it('kstTimestampOf: the text of kstTimestamp, whatever the session time zone; null for null', async () => {
    const instants = [
      '2026-11-21T05:03:00.789Z',
      '2026-11-21T14:59:59.999Z',
      '2026-11-21T15:00:00Z',
      '2026-12-31T15:00:00Z',
      '2028-02-28T15:30:00.5Z',
      '1900-01-01T00:00:00Z',
      // Korea observed daylight saving time in 1987 and 1988; the text says +09:00, and so do its digits.
      '1987-07-01T00:00:00Z',
    ];
    for (const zone of ['UTC', 'America/New_York', 'Asia/Seoul']) {
      const texts = await database.db.transaction(async (tx) => {
        await tx.execute(sql.raw(`SET LOCAL TIME ZONE '${zone}'`));
        return Promise.all(
          instants.map(async (instant) => {
            const [row] = await tx
              .select({ text: kstTimestampOf(sql`${instant}::timestamptz`) })
              .from(sql`(SELECT 1) AS one`);
            return row?.text;
          }),
        );
      });
      expect(texts, zone).toEqual(instants.map((instant) => kstTimestamp(new Date(instant))));
    }
    const [row] = await database.db
      .select({ text: kstTimestampOf<null>(sql`NULL::timestamptz`) })
      .from(sql`(SELECT 1) AS one`);
    expect(row?.text).toBeNull();
  });

  it('mondayOfDay: the Monday of mondayOf, for every day across a year end and a leap day', async () => {
    const rows = await database.db
      .select({ day: sql<string>`day::date`, monday: mondayOfDay(sql`day::date`) })
      .from(sql`generate_series('2027-12-20'::date, '2028-03-10'::date, interval '1 day') AS day`);
    expect(rows).toHaveLength(82);
    for (const { day, monday } of rows) expect(monday, day).toBe(mondayOf(day));
    // Around its reference Monday (1970-01-05), where the days since it turn negative.
    const early = await database.db
      .select({ day: sql<string>`day::date`, monday: mondayOfDay(sql`day::date`) })
      .from(sql`generate_series('1969-12-20'::date, '1970-01-20'::date, interval '1 day') AS day`);
    expect(early).toHaveLength(32);
    for (const { day, monday } of early) expect(monday, day).toBe(mondayOf(day));
  });
});

/** A second handle (its own connection pool) on the PostgreSQL database of `handle`. */
async function openSameDatabase(handle: DatabaseHandle): Promise<DatabaseHandle> {
  const template = inject('postgresTemplate');
  if (!template) throw new Error('PostgreSQL only');
  const [current] = await handle.rows<{ name: string }>(sql`SELECT current_database() AS name`);
  if (!current) throw new Error('no current database');
  return openDatabase({ url: withDatabase(template.url, current.name), maxConnections: 2 });
}
