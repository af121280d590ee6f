// What grows with the data (the growth table of BENCHMARKS.md): the daily build's time, full against
// incremental after one day of writes, and the database's size. bench/http.ts calls measureGrowth on the
// database it measures; run alone, this file prints the growth table from bench/http.ts's results of the
// kept databases (npm run bench:growth [-- --run] [--duration S]); `--builds-only DB` measures the
// builds and sizes of one kept database alone.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { and, asc, eq, gte, inArray, like, lt, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { buildDailyAggregate } from '../db/aggregate';
import { type DatabaseHandle, openDatabase } from '../db/client';
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
  // The first incremental build after a full one analyzes the tables (the statistics count the full
  // build's rows as changed since the ANALYZE it ran inside its transaction); the days after do not.
  // The day measured is one of those.
  await buildDailyAggregate(db, { now });
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
    aggregateRows: (full.reviewRows ?? 0) + (full.salesRows ?? 0),
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

type Measured = { name: string; paced?: { p50: number; p99: number } };
type Result = {
  machine: { reviews: number; database: string; loadAverage: string };
  results: Measured[];
  growth?: Growth;
};

const MIB = 2 ** 20;

/**
 * One size's row. Each latency cell is the paced p50 / p99 in ms at the scenario's rate (bench/http.ts
 * prints CPU per call too, but it sums every PostgreSQL process of the machine: on a shared machine it
 * counts the neighbours').
 */
function growthRow(result: Result): Row {
  const find = (name: string) => result.results.find((entry) => entry.name === name);
  const cell = (entry: Measured | undefined) => (entry?.paced ? `${entry.paced.p50} / ${entry.paced.p99}` : '–');
  const reports = result.results.filter((entry) => /366 days/.test(entry.name) && entry.paced);
  const worstReport = reports.reduce<Measured | undefined>(
    (worst, entry) => ((entry.paced?.p99 ?? 0) > (worst?.paced?.p99 ?? -1) ? entry : worst),
    undefined,
  );
  const cursor = find('page 1000 by cursor, limit 100');
  const first = find('page 1, limit 100');
  const growth = result.growth;
  const size = (name: string) => growth?.relations.find((relation) => relation.name === name)?.bytes ?? Number.NaN;
  // The short-keyword index, brand-scoped since migration 0012; results recorded before it name the old one.
  const gramsIndex = Number.isNaN(size('reviews_brand_grams_idx'))
    ? size('reviews_grams_idx')
    : size('reviews_brand_grams_idx');
  return {
    reviews: whole(totalReviews(result)),
    'newest page @300': cell(find('reviews, newest page')),
    '30 days + platform @300': cell(find('reviews, 30 days + platform')),
    'keyword 맛있어 @100': cell(find('keyword 맛있어 (3 chars, common)')),
    'keyword 짜요 @100': cell(find('keyword 짜요 (2 chars)')),
    'page 1000 by cursor; page 1 (limit 100) @300': `${cell(cursor)}; ${cell(first)}`,
    'worst of 8 reports, 366 days @100': worstReport ? `${cell(worstReport)} (${worstReport.name})` : '–',
    'daily build: full / incremental ms (rows written)': growth
      ? `${whole(growth.fullBuildMs)} (${whole(growth.aggregateRows)}) / ${whole(growth.incrementalBuildMs)} (${whole(growth.writtenRows)})`
      : '–',
    'MiB: database / reviews / grams index / review_stats_daily': growth
      ? [growth.databaseBytes, size('reviews'), gramsIndex, size('review_stats_daily')]
          .map((bytes) => whole(bytes / MIB))
          .join(' / ')
      : '–',
    'load average at the end': result.machine.loadAverage,
  };
}

/** Every review of the database, not only the bench brand's (bench/http.ts counts the brand's). */
function totalReviews(result: Result): number {
  const size = GROWTH_DATABASES.find((entry) => entry.database === result.machine.database);
  return size ? Number(size.reviews) : result.machine.reviews;
}

const RESULTS_DIR = path.resolve(import.meta.dirname, 'results');

/**
 * What the table shows of `database`: the newest bench/http.ts run's latencies (http-*.json), with the
 * newest growth figures, of that run or of a later --builds-only (growth-*.json).
 */
function newestResult(database: string): Result | undefined {
  const files = (existsSync(RESULTS_DIR) ? readdirSync(RESULTS_DIR) : [])
    .filter((name) => /^(http|growth)-.*\.json$/.test(name))
    .sort((a, b) => a.slice(a.indexOf('-')).localeCompare(b.slice(b.indexOf('-'))))
    .reverse();
  const results = files
    .map((file) => JSON.parse(readFileSync(path.join(RESULTS_DIR, file), 'utf8')) as Result)
    .filter((result) => result.machine.database === database && result.growth);
  const http = results.find((result) => result.results.length > 0);
  const growth = results[0];
  return http && growth ? { ...http, growth: growth.growth } : growth;
}

/** The daily build and the sizes alone, without the HTTP runs: for a quick look at a kept database. */
async function buildsOnly(database: string) {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${database}`;
  const handle = await openDatabase({ url: url.toString(), maxConnections: 2 });
  try {
    await handle.migrate();
    const growth = await measureGrowth(handle, new Date());
    const [count] = await handle.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${reviews}`);
    const machine = {
      database,
      reviews: count?.n ?? 0,
      loadAverage: os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' '),
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    const file = path.join(RESULTS_DIR, `growth-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    await writeFile(file, `${JSON.stringify({ machine, results: [], growth }, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(growth)}\nsaved ${path.relative(process.cwd(), file)}\n`);
  } finally {
    await handle.close();
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      run: { type: 'boolean', default: false },
      duration: { type: 'string', default: '5' },
      'builds-only': { type: 'string' },
    },
  });
  const only = values['builds-only'];
  if (only) {
    await buildsOnly(only);
    return;
  }
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
