// What grows with the data (the growth table of BENCHMARKS.md): the daily build's time, full against
// incremental after one day of writes, and the database's size. bench/http.ts calls measureGrowth on the
// database it measures; run alone, this file prints the growth table from bench/http.ts's results of the
// kept databases (npm run bench:growth [-- --run] [--duration S]).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { and, asc, eq, gte, inArray, like, lt, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { buildDailyAggregate } from '../db/aggregate';
import type { DatabaseHandle } from '../db/client';
import { addDays, kstDayStart, kstToday } from '../db/kst';
import { brands, reviews, shops } from '../db/schema';
import { BENCH_BRAND_CODE } from '../db/seed/large';
import { markdownTable, type Row, whole } from './lib';

/** A day of writes to one brand of a million reviews a year: its new reviews, and late replies. */
const DAY_REVIEWS = Math.round(1_000_000 / 365);
const LATE_REPLIES = Math.round(DAY_REVIEWS / 100);

export type Growth = {
  fullBuildMs: number;
  incrementalBuildMs: number;
  /** Rows the incremental build rewrote. */
  writtenRows: number;
  aggregateRows: number;
  databaseBytes: number;
  relations: { name: string; bytes: number }[];
};

const elapsed = async <T>(body: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const result = await body();
  return [result, performance.now() - started];
};

/**
 * Full build at `now`; then one day of writes to bench-brand (DAY_REVIEWS reviews written today, and
 * LATE_REPLIES replies posted to reviews of the last 30 days) and the incremental build of the next day,
 * which covers them. The same day at every size, so the incremental build's time shows what history adds.
 * The writes are undone afterwards (and a full build at `now` restores the aggregate the reads expect),
 * so a kept database stays as seeded.
 */
export async function measureGrowth(database: DatabaseHandle, now: Date): Promise<Growth> {
  const { db } = database;
  const [full, fullBuildMs] = await elapsed(() => buildDailyAggregate(db, { now, full: true }));
  const today = kstToday(now);
  const benchShops = await db
    .select({ id: shops.id, brandId: shops.brandId })
    .from(shops)
    .innerJoin(brands, eq(brands.id, shops.brandId))
    .where(and(eq(brands.brandCode, BENCH_BRAND_CODE), eq(shops.status, 'ACTIVE')))
    .orderBy(asc(shops.id));
  if (benchShops.length === 0) throw new Error(`no active shop of ${BENCH_BRAND_CODE}: seed it first`);
  // Written only here; an interrupted run's rows go first.
  const prefix = 'GROWTH-';
  await db.delete(reviews).where(like(reviews.reviewCode, `${prefix}%`));
  const todayStart = kstDayStart(today).getTime();
  const dayMs = Math.max(1, Math.min(now.getTime() - todayStart, 86_400_000));
  const rows = Array.from({ length: DAY_REVIEWS }, (_, index) => {
    const shop = benchShops[index % benchShops.length] as (typeof benchShops)[number];
    return {
      reviewCode: `${prefix}${index}`,
      brandId: shop.brandId,
      shopId: shop.id,
      writtenAt: new Date(Math.floor((todayStart + (index / DAY_REVIEWS) * dayMs) / 1000) * 1000),
      content: '오늘도 맛있게 먹었어요',
      rating: 1 + (index % 9) / 2,
    };
  });
  for (let start = 0; start < rows.length; start += 1000)
    await db.insert(reviews).values(rows.slice(start, start + 1000));
  const replied = await db
    .select({ id: reviews.id })
    .from(reviews)
    .where(
      and(
        inArray(
          reviews.shopId,
          benchShops.map((shop) => shop.id),
        ),
        gte(reviews.writtenAt, kstDayStart(addDays(today, -30))),
        lt(reviews.writtenAt, kstDayStart(today)),
        eq(reviews.replyState, 'NONE'),
        // Spread over the 30 days rather than the first rows the scan meets.
        sql`${reviews.id} % 97 = 0`,
      ),
    )
    .limit(LATE_REPLIES);
  const repliedIds = replied.map((row) => row.id);
  await db
    .update(reviews)
    .set({ replyState: 'POSTED', replyContent: '감사합니다', replyAt: now })
    .where(inArray(reviews.id, repliedIds));

  const tomorrow = new Date(now.getTime() + 86_400_000);
  let incremental: Awaited<ReturnType<typeof buildDailyAggregate>>;
  let incrementalBuildMs: number;
  try {
    [incremental, incrementalBuildMs] = await elapsed(() => buildDailyAggregate(db, { now: tomorrow }));
    if (incremental.kind !== 'incremental') throw new Error(`expected an incremental build, got ${incremental.kind}`);
  } finally {
    await db.delete(reviews).where(like(reviews.reviewCode, `${prefix}%`));
    await db
      .update(reviews)
      .set({ replyState: 'NONE', replyContent: null, replyAt: null })
      .where(inArray(reviews.id, repliedIds));
    await buildDailyAggregate(db, { now, full: true });
  }

  const [size] = await database.rows<{ bytes: string }>(
    sql`SELECT pg_database_size(current_database())::text AS bytes`,
  );
  const relations = await database.rows<{ name: string; bytes: string }>(sql`
    SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')
      AND (c.relname LIKE 'reviews%' OR c.relname LIKE 'sales%' OR c.relname LIKE 'review_stats%')
    ORDER BY pg_total_relation_size(c.oid) DESC`);
  return {
    fullBuildMs,
    incrementalBuildMs,
    writtenRows: incremental.writtenRows,
    aggregateRows: full.reviewRows + full.salesRows,
    databaseBytes: Number(size?.bytes),
    relations: relations.map((relation) => ({ name: relation.name, bytes: Number(relation.bytes) })),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The growth table, from the newest bench/http.ts result of each kept database.

export const GROWTH_DATABASES = [
  { reviews: '200000', database: 'partner_bench_200k' },
  { reviews: '1000000', database: 'partner_bench_1m' },
  { reviews: '10000000', database: 'partner_bench_10m' },
] as const;

/** The bench/http.ts scenarios the growth table reads. */
export const GROWTH_SCENARIOS = [
  'reviews, newest page',
  'reviews, 30 days + platform',
  'keyword 맛있어 (3 chars, common)',
  'keyword 짜요 (2 chars)',
  'page 1, limit 100',
  'page 1000 by cursor, limit 100',
  'review-stats by',
  'sales by',
];

type Result = {
  machine: { reviews: number; database: string; loadAverage: string };
  results: { name: string; rate?: number; paced?: { p50: number; p99: number } }[];
  growth?: Growth;
};

const MIB = 2 ** 20;

function growthRow(result: Result): Row {
  const p99 = (name: string) => {
    const found = result.results.find((entry) => entry.name === name);
    return found?.paced ? `${found.paced.p99}` : '–';
  };
  const reports = result.results.filter((entry) => /366 days/.test(entry.name) && entry.paced);
  const worstReport = reports.reduce((worst, entry) => Math.max(worst, entry.paced?.p99 ?? 0), 0);
  const cursor = result.results.find((entry) => entry.name.startsWith('page 1000 by cursor'))?.paced;
  const first = result.results.find((entry) => entry.name === 'page 1, limit 100')?.paced;
  const growth = result.growth;
  const reviewsOf = growth?.relations.find((relation) => relation.name === 'reviews');
  const grams = growth?.relations.find((relation) => relation.name === 'reviews_grams_idx');
  return {
    reviews: whole(result.machine.reviews === undefined ? Number.NaN : totalReviews(result)),
    'newest page p99 @300': p99('reviews, newest page'),
    '30 days + platform p99 @300': p99('reviews, 30 days + platform'),
    'keyword 맛있어 / 짜요 p99 @100': `${p99('keyword 맛있어 (3 chars, common)')} / ${p99('keyword 짜요 (2 chars)')}`,
    'page 1000 by cursor / page 1, p50 (p99) @300':
      cursor && first ? `${cursor.p50} (${cursor.p99}) / ${first.p50} (${first.p99})` : '–',
    'reports, 366 days, worst p99 @100': reports.length ? `${worstReport} (${reports.length} reports)` : '–',
    'daily build full / incremental, ms': growth
      ? `${whole(growth.fullBuildMs)} / ${whole(growth.incrementalBuildMs)} (${whole(growth.writtenRows)} of ${whole(growth.aggregateRows)} rows)`
      : '–',
    'database / reviews / grams index, MiB': growth
      ? `${whole(growth.databaseBytes / MIB)} / ${whole((reviewsOf?.bytes ?? Number.NaN) / MIB)} / ${whole((grams?.bytes ?? Number.NaN) / MIB)}`
      : '–',
    'load average': result.machine.loadAverage,
  };
}

/** Every review of the database, not only the bench brand's (bench/http.ts counts the brand's). */
function totalReviews(result: Result): number {
  const size = GROWTH_DATABASES.find((entry) => entry.database === result.machine.database);
  return size ? Number(size.reviews) : result.machine.reviews;
}

function newestResult(database: string): Result | undefined {
  const dir = path.resolve(import.meta.dirname, 'results');
  const files = readdirSync(dir)
    .filter((name) => name.startsWith('http-') && name.endsWith('.json'))
    .sort()
    .reverse();
  for (const file of files) {
    const result = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Result;
    if (result.machine.database === database && result.growth) return result;
  }
  return undefined;
}

async function main() {
  const { values } = parseArgs({
    options: { run: { type: 'boolean', default: false }, duration: { type: 'string', default: '5' } },
  });
  if (values.run) {
    const admin = postgres(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', { max: 1 });
    for (const { reviews: count, database } of GROWTH_DATABASES) {
      const [exists] = await admin`SELECT 1 FROM pg_database WHERE datname = ${database}`;
      const seed = exists ? ['--reuse', database] : ['--reviews', count, '--keep', '--name', database];
      const run = spawnSync(
        'npx',
        [
          'tsx',
          'bench/http.ts',
          ...seed,
          '--growth',
          '--duration',
          values.duration,
          '--only',
          GROWTH_SCENARIOS.join('|'),
        ],
        { stdio: 'inherit' },
      );
      if (run.status !== 0) throw new Error(`bench/http.ts on ${database} exited ${run.status}`);
    }
    await admin.end();
  }
  const rows = GROWTH_DATABASES.map(({ database }) => newestResult(database))
    .filter((result): result is Result => result !== undefined)
    .map(growthRow);
  process.stdout.write(`${markdownTable(rows)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}
