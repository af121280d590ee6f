import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { buildDailyAggregate } from '../db/aggregate';
import { openDatabase } from '../db/client';
import { findBrand } from '../db/queries/brands';
import { type ReviewFilters, reviewListQuery } from '../db/queries/reviews';
import { DEMO_KEYS, seedDemo } from '../db/seed/demo';
import { BENCH_BRAND_CODE, seedLarge } from '../db/seed/large';
import { createCaller } from '../routers';
import { parseConfig } from '../server/config';
import { silentLogger } from '../server/logger';
import { createRequestContext } from '../server/trpc/context';
import { createServices } from '../server/trpc/services';

// npm run bench [-- --reviews N --runs R]: on a large brand, the review list's access paths, review-stats
// and sales through the whole procedure stack (auth, limit, validation, query, output schema), against
// targets, and the daily aggregate's build time. On PGlite by
// default; with DATABASE_URL, in a scratch database created on that server and dropped afterwards.

/**
 * p95 targets on PostgreSQL, the production driver. PGlite, the embedded demo default (PostgreSQL in
 * single-threaded WASM, one connection), is held to PGLITE_FACTOR times these.
 */
const PGLITE_FACTOR = 3;
const TARGETS_MS: Record<string, number> = {
  'newest page': 25,
  'one shop, newest page': 25,
  'last 7 days': 25,
  'critical only': 50,
  'rating_max=2': 50,
  'page 50': 100,
  'keyword (3+ chars, common)': 100,
  'keyword (3+ chars, absent)': 100,
  'keyword (2 Hangul chars) + 30 days': 400,
  'single review': 15,
  'review-stats by date (30 days)': 50,
  'review-stats by shop (30 days)': 50,
  'sales by shop (30 days)': 50,
  'sales by week (90 days)': 50,
};

async function main() {
  const { values } = parseArgs({
    options: { reviews: { type: 'string', default: '100000' }, runs: { type: 'string', default: '25' } },
  });
  const reviews = Number(values.reviews);
  const runs = Number(values.runs);
  const config = parseConfig(process.env);

  let dropScratch = async () => {};
  let url: string | undefined;
  if (config.DATABASE_URL) {
    const admin = postgres(config.DATABASE_URL, { max: 1, onnotice: () => {} });
    const name = `partner_bench_${process.pid}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const parsed = new URL(config.DATABASE_URL);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
    dropScratch = async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    };
  }
  const database = await openDatabase(url ? { url } : {});
  try {
    await database.migrate();
    const now = new Date();
    await seedDemo(database.db, { now });
    const started = Date.now();
    await seedLarge(database.db, {
      reviews,
      now,
      onProgress: (done, total) => process.stdout.write(`\rseeding ${done}/${total} reviews`),
    });
    process.stdout.write(
      `\nseeded ${reviews} reviews on ${database.driver} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    const building = Date.now();
    const aggregate = await buildDailyAggregate(database.db, { now });
    await database.db.execute(sql`ANALYZE`);
    const seconds = ((Date.now() - building) / 1000).toFixed(1);
    process.stdout.write(
      `daily aggregate (${aggregate.kind}): ${aggregate.writtenRows} rows written in ${seconds} s\n\n`,
    );

    const services = createServices(
      parseConfig({ RATE_LIMIT_PER_MINUTE: '1000000' }),
      database.db,
      silentLogger,
      () => now,
    );
    const api = createCaller(createRequestContext(services, { apiKey: DEMO_KEYS.active }));
    const brand = BENCH_BRAND_CODE;
    const first = (await api.reviews.list({ brand_code: brand, limit: 1 })).data.items[0];
    if (!first) throw new Error('bench brand has no reviews');
    const today = first.date.slice(0, 10);
    const daysBefore = (days: number) => new Date(Date.parse(today) - days * 86_400_000).toISOString().slice(0, 10);

    const scenarios: [string, ReviewFilters & { page?: number }][] = [
      ['newest page', {}],
      ['one shop, newest page', { platform_shop_id: first.platform_shop_id }],
      ['last 7 days', { from: daysBefore(7), to: today }],
      ['critical only', { critical: true }],
      ['rating_max=2', { rating_max: 2 }],
      ['page 50', { page: 50 }],
      ['keyword (3+ chars, common)', { keyword: '맛있어' }],
      ['keyword (3+ chars, absent)', { keyword: '존재하지않는말' }],
      ['keyword (2 Hangul chars) + 30 days', { keyword: '짜요', from: daysBefore(30), to: today }],
    ];

    const rows: string[] = [];
    let failed = 0;
    const measure = async (name: string, call: () => Promise<unknown>) => {
      await call(); // warm
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        await call();
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      const p = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? Number.NaN;
      const target =
        (TARGETS_MS[name] ?? Number.POSITIVE_INFINITY) * (database.driver === 'pglite' ? PGLITE_FACTOR : 1);
      const ok = p(0.95) <= target;
      if (!ok) failed++;
      rows.push(`| ${name} | ${p(0.5).toFixed(1)} | ${p(0.95).toFixed(1)} | ${target} | ${ok ? 'ok' : 'SLOW'} |`);
    };
    for (const [name, filters] of scenarios) {
      await measure(name, () => api.reviews.list({ brand_code: brand, ...filters }));
    }
    await measure('single review', () => api.reviews.get({ brand_code: brand, review_id: first.review_id }));
    await measure('review-stats by date (30 days)', () => api.reviewStats.list({ brand_code: brand }));
    await measure('review-stats by shop (30 days)', () =>
      api.reviewStats.list({ brand_code: brand, group_by: 'shop' }),
    );
    await measure('sales by shop (30 days)', () => api.sales.list({ brand_code: brand }));
    await measure('sales by week (90 days)', () =>
      api.sales.list({ brand_code: brand, group_by: 'week', from: daysBefore(90), to: today }),
    );

    process.stdout.write(
      `${[`| scenario (${reviews} reviews, ${database.driver}) | p50 ms | p95 ms | target p95 | |`, '|---|---|---|---|---|', ...rows].join('\n')}\n\n`,
    );

    // The plans of the exact SQL the API runs, for the paths the indexes are for.
    const scope = await findBrand(database.db, brand);
    if (scope) {
      const planned = scenarios.filter(([name]) => name === 'newest page' || name.startsWith('keyword'));
      for (const [name, filters] of planned) {
        const plan = await database.rows<Record<string, string>>(
          sql`EXPLAIN (COSTS OFF) ${reviewListQuery(database.db, scope, filters, { limit: 21, offset: 0 })}`,
        );
        process.stdout.write(`-- plan: ${name}\n${plan.map((row) => Object.values(row)[0]).join('\n')}\n\n`);
      }
    }
    if (failed) {
      process.stdout.write(`${failed} scenario(s) over target\n`);
      process.exitCode = 1;
    }
  } finally {
    await database.close();
    await dropScratch();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
