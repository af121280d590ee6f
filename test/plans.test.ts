import { type SQLWrapper, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/client';
import { addDays, kstToday } from '../db/kst';
import { findBrand } from '../db/queries/brands';
import { literalLimit } from '../db/queries/pagination';
import { listReviewStats } from '../db/queries/reviewStats';
import { listReviews, reviewListQuery } from '../db/queries/reviews';
import { listSales, salesQuery } from '../db/queries/sales';
import { DRIVER, NOW, openTestDatabase } from './support/database';

// Statements and their plans: the review list's statement is prepared (drizzle's `.prepare()`) and may
// run on a cached plan, so the page size is part of its text; with a keyword it is sent unnamed, so it is
// planned for its own word every time, and so are the report statements, whose best plan depends on the
// length of their range.
let database: Awaited<ReturnType<typeof openTestDatabase>>;
beforeAll(async () => {
  database = await openTestDatabase();
});

async function chickenHouse(db = database.db) {
  const brand = await findBrand(db, 'chicken-house');
  if (!brand) throw new Error('demo brand missing');
  return brand;
}

/** EXPLAIN of `query` in a transaction with each of `off` (planner settings) turned off. */
async function explain(query: SQLWrapper, off: string[]): Promise<string> {
  return database.db.transaction(async (tx) => {
    for (const setting of off) await tx.execute(sql`SELECT set_config(${setting}, 'off', true)`);
    const result = (await tx.execute(sql`EXPLAIN ${query}`)) as unknown as
      | { 'QUERY PLAN': string }[]
      | { rows: { 'QUERY PLAN': string }[] };
    return (Array.isArray(result) ? result : result.rows).map((row) => row['QUERY PLAN']).join('\n');
  });
}

describe('list statements', () => {
  it('carry the page size in their text, not as a parameter', async () => {
    const query = reviewListQuery(database.db, await chickenHouse(), {}, { limit: 21, offset: 0 }).toSQL();
    expect(query.sql).toMatch(/ limit 21\)/);
    expect(query.sql).not.toMatch(/ limit \$/);
  });

  it.skipIf(DRIVER !== 'postgres')('of the review list are prepared on PostgreSQL, except with a keyword', async () => {
    // One connection, so the session whose prepared statements are read is the one that ran the lists.
    const single = await openDatabase({ url: database.url ?? '', maxConnections: 1 });
    try {
      const brand = await chickenHouse(single.db);
      await listReviews(single.db, brand, { platform: 'BAEMIN' }, { page: 1, limit: 7 });
      await listReviews(single.db, brand, { keyword: '치킨' }, { page: 1, limit: 7 });
      const prepared = await single.rows<{ statement: string }>(sql`SELECT statement FROM pg_prepared_statements`);
      const texts = prepared.map((row) => row.statement);
      expect(texts.some((text) => text.includes('"shops"."platform" = $') && text.includes('limit 8'))).toBe(true);
      expect(texts.some((text) => /ILIKE/i.test(text))).toBe(false);
    } finally {
      await single.close();
    }
  });

  it.skipIf(DRIVER !== 'postgres')('plan reports for their own range: none is prepared', async () => {
    const single = await openDatabase({ url: database.url ?? '', maxConnections: 1 });
    try {
      const brand = await chickenHouse(single.db);
      const today = kstToday(NOW);
      const range = { from: addDays(today, -366), to: addDays(today, -1) };
      for (const group_by of ['date', 'week', 'shop'] as const)
        await listSales(single.db, brand, { ...range, group_by }, { page: 1, limit: 7 });
      for (const group_by of ['date', 'platform'] as const)
        await listReviewStats(single.db, brand, { ...range, group_by }, { page: 1, limit: 7 });
      const prepared = await single.rows<{ statement: string }>(sql`SELECT statement FROM pg_prepared_statements`);
      const texts = prepared.map((row) => row.statement);
      // A cached plan took a year's range for a few rows and sorted all of them for one page of weeks.
      expect(texts.filter((text) => /sales_daily|review_stats_daily/.test(text))).toEqual([]);
    } finally {
      await single.close();
    }
  });

  it("look a short keyword up in the read brand's grams index (migration 0012)", async () => {
    // With the statistics of the index expressions (as the embedded start takes them) and the ordered
    // index scans priced out, the plan left finds the keyword's reviews by an index. The grams index serves
    // it only if the statement's expression is the index's, and it is read for the brand's grams alone:
    // one posting list per brand and gram, whatever the other brands hold.
    await database.db.execute(sql`ANALYZE reviews`);
    const brand = await chickenHouse();
    for (const keyword of ['짜요', '맛', 'Zq']) {
      const query = reviewListQuery(database.db, brand, { keyword }, { limit: 21, offset: 0 });
      const plan = await explain(query, ['enable_indexscan', 'enable_indexonlyscan', 'enable_seqscan']);
      expect(plan, keyword).toContain('Bitmap Index Scan on reviews_brand_grams_idx');
      const grams = [...new Set([...keyword.toLowerCase(), keyword.toLowerCase()])];
      const cond = /Index Cond: \(partner_brand_grams\(brand_id, content, menus\) @> '\{([^}]*)\}'/.exec(plan);
      expect(cond?.[1]?.split(',').sort(), keyword).toEqual(grams.map((gram) => `${brand.id}:${gram}`).sort());
    }
  });

  it('read sales by week in week order from the index on mondayOfDay (migration 0008)', async () => {
    // With sequential scans and sorts priced out, the plan left reads that index; it can only if the
    // index's expression is exactly the query's (db/kst.ts mondayOfDay).
    const brand = await chickenHouse();
    const today = kstToday(NOW);
    const query = salesQuery(database.db, brand, {
      from: addDays(today, -366),
      to: addDays(today, -1),
      group_by: 'week',
    }).limit(literalLimit(21));
    const plan = await database.db.transaction(async (tx) => {
      await tx.execute(sql`SET LOCAL enable_seqscan = off`);
      await tx.execute(sql`SET LOCAL enable_sort = off`);
      const result = (await tx.execute(sql`EXPLAIN ${query}`)) as unknown as
        | { 'QUERY PLAN': string }[]
        | { rows: { 'QUERY PLAN': string }[] };
      return (Array.isArray(result) ? result : result.rows).map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('sales_daily_brand_week_idx');
    expect(plan).not.toMatch(/\bSort\b/);
  });
});
