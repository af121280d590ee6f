import { asc, eq, sql } from 'drizzle-orm';
import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDailyAggregate } from '../db/aggregate';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { addDays, kstDayStart, kstToday } from '../db/kst';
import {
  aggregateChanges,
  aggregateRuns,
  reviewStatsDaily,
  reviews,
  salesDaily,
  salesSnapshots,
  shops,
} from '../db/schema';
import { aggregateRows } from './support/aggregate';
import { DRIVER, NOW, openTestDatabase } from './support/database';
import { withDatabase } from './support/global-setup';

// D-6: a build may work incrementally only if its tables equal a full rebuild's on the same data. Each
// test writes the same changes into two copies of the template (aggregated in full at NOW): one is built
// incrementally along the way, the other in full once at the end, and every row of both must agree.

type Db = DatabaseHandle['db'];
const DAY_MS = 24 * 3_600_000;
const TODAY = kstToday(NOW);

/** The same writes on both copies, in the same order (their ids then agree too). */
async function onBoth(pair: readonly DatabaseHandle[], write: (db: Db) => Promise<unknown>) {
  for (const database of pair) await write(database.db);
}

/** Builds `incremental` from its change log and `full` anew, both for `now`, and compares every row. */
async function expectSameAsFull(incremental: DatabaseHandle, full: DatabaseHandle, now: Date) {
  const built = await buildDailyAggregate(incremental.db, { now });
  expect(built.kind).toBe('incremental');
  expect(await buildDailyAggregate(full.db, { now, full: true })).toMatchObject({ kind: 'full' });
  expect(await aggregateRows(incremental.db)).toEqual(await aggregateRows(full.db));
  return built;
}

/** A KST instant `daysAgo` days before the day of `now`, at `hour` o'clock. */
const at = (now: Date, daysAgo: number, hour = 12) =>
  new Date(kstDayStart(addDays(kstToday(now), -daysAgo)).getTime() + hour * 3_600_000);

/** The id of the k-th review in id order (modulo their count): the same row on both copies. */
async function nthReview(db: Db, k: number) {
  const count = await db.$count(reviews);
  const [row] = await db
    .select({ id: reviews.id })
    .from(reviews)
    .orderBy(asc(reviews.id))
    .offset(k % count)
    .limit(1);
  if (!row) throw new Error('no reviews');
  return row.id;
}

async function shopList(db: Db) {
  return db
    .select({ id: shops.id, brandId: shops.brandId, platform: shops.platform })
    .from(shops)
    .orderBy(asc(shops.id));
}

describe('an incremental build (D-6)', () => {
  let pair: [DatabaseHandle, DatabaseHandle];
  beforeAll(async () => {
    pair = [await openTestDatabase(), await openTestDatabase()];
  });

  it('after a day of writes equals a full rebuild: late replies, edits, deletions, sales and a newly linked shop', async () => {
    const [incremental, full] = pair;
    const someShops = await shopList(incremental.db);
    const baemin = someShops.filter((shop) => shop.platform === 'BAEMIN');
    const [first, second, third] = baemin;
    if (!first || !second || !third) throw new Error('demo data: too few BAEMIN shops');
    const oldReply = await nthReview(incremental.db, 17);
    const oldRating = await nthReview(incremental.db, 1_234);
    const oldGone = await nthReview(incremental.db, 2_345);

    await onBoth(pair, async (db) => {
      // Today's and yesterday's new reviews (yesterday's collected late).
      await db.insert(reviews).values([
        { reviewCode: 'R-INC-TODAY', brandId: first.brandId, shopId: first.id, writtenAt: at(NOW, 0, 1), rating: 3 },
        { reviewCode: 'R-INC-LATE', brandId: first.brandId, shopId: first.id, writtenAt: at(NOW, 1, 23), rating: 5 },
      ]);
      // A reply posted today to an old review, a rating edited, a review taken down.
      await db
        .update(reviews)
        .set({ replyState: 'POSTED', replyContent: '감사합니다', replyAt: NOW })
        .where(eq(reviews.id, oldReply));
      await db.update(reviews).set({ rating: 0.5 }).where(eq(reviews.id, oldRating));
      await db.delete(reviews).where(eq(reviews.id, oldGone));
      // Sales: a day corrected, a day withdrawn, a day before the history.
      await db
        .update(salesSnapshots)
        .set({ amount: 1 })
        .where(sql`${salesSnapshots.shopId} = ${second.id} AND ${salesSnapshots.day} = ${addDays(TODAY, -40)}`);
      await db
        .delete(salesSnapshots)
        .where(sql`${salesSnapshots.shopId} = ${second.id} AND ${salesSnapshots.day} = ${addDays(TODAY, -3)}`);
      await db.insert(salesSnapshots).values({ shopId: second.id, day: addDays(TODAY, -900), amount: 7_000 });
      // A shop linked today with a year of history, and one whose sales platform changed.
      const [linked] = await db
        .insert(shops)
        .values({
          brandId: first.brandId,
          platform: 'CPEATS',
          platformShopId: 'INC-LINKED-1',
          name: '새로 연결된 매장',
          categoryName: '치킨',
          status: 'ACTIVE',
          linkedAt: at(NOW, 0, 0),
        })
        .returning({ id: shops.id });
      if (!linked) throw new Error('shop not inserted');
      await db.insert(reviews).values(
        [300, 120, 5, 1].map((daysAgo) => ({
          reviewCode: `R-INC-HIST-${daysAgo}`,
          brandId: first.brandId,
          shopId: linked.id,
          writtenAt: at(NOW, daysAgo),
          rating: 4,
        })),
      );
      await db
        .insert(salesSnapshots)
        .values([200, 2, 1].map((daysAgo) => ({ shopId: linked.id, day: addDays(TODAY, -daysAgo), amount: 10_000 })));
      await db.update(shops).set({ platform: 'NAVER' }).where(eq(shops.id, third.id));
    });

    // Today's build: the day's changes, without today and without the shop linked today.
    const built = await expectSameAsFull(incremental, full, NOW);
    expect(built.writtenRows).toBeGreaterThan(0);
    expect(built).not.toHaveProperty('reviewRows');
    const rows = (await incremental.db.$count(reviewStatsDaily)) + (await incremental.db.$count(salesDaily));
    expect(built.writtenRows).toBeLessThan(rows / 4);
    // Tomorrow's: today's reviews, and the linked shop with its whole history.
    const tomorrow = new Date(NOW.getTime() + DAY_MS);
    await expectSameAsFull(incremental, full, tomorrow);
    const [linked] = await incremental.db
      .select({ id: shops.id })
      .from(shops)
      .where(eq(shops.platformShopId, 'INC-LINKED-1'));
    const linkedDays = (await aggregateRows(incremental.db)).stats
      .filter((row) => row.shopId === linked?.id)
      .map((row) => row.day);
    expect(linkedDays).toEqual([300, 120, 5, 1].map((daysAgo) => addDays(TODAY, -daysAgo)));
  });

  it('with nothing changed writes nothing and leaves the same rows', async () => {
    const [incremental] = pair;
    const before = await aggregateRows(incremental.db);
    const built = await buildDailyAggregate(incremental.db, { now: new Date(NOW.getTime() + DAY_MS) });
    expect(built).toMatchObject({ kind: 'incremental', writtenRows: 0 });
    expect(await aggregateRows(incremental.db)).toEqual(before);
  });
});

describe('the change log (D-6)', () => {
  it('keeps the changes of today for the build that covers today, and gives the rest to the build', async () => {
    const database = await openTestDatabase();
    const [shop] = await shopList(database.db);
    if (!shop) throw new Error('demo data: no shop');
    await database.db.delete(aggregateChanges);
    await database.db.insert(reviews).values([
      { reviewCode: 'R-LOG-TODAY', brandId: shop.brandId, shopId: shop.id, writtenAt: at(NOW, 0) },
      { reviewCode: 'R-LOG-PAST', brandId: shop.brandId, shopId: shop.id, writtenAt: at(NOW, 10) },
    ]);
    const noted = () =>
      database.db
        .select({ day: aggregateChanges.day })
        .from(aggregateChanges)
        .where(eq(aggregateChanges.shopId, shop.id));
    // One row per shop and day the statement touched.
    expect((await noted()).map((row) => row.day).sort()).toEqual([addDays(TODAY, -10), TODAY]);
    await buildDailyAggregate(database.db, { now: NOW });
    expect(await noted()).toEqual([{ day: TODAY }]);
    await buildDailyAggregate(database.db, { now: new Date(NOW.getTime() + DAY_MS) });
    expect(await noted()).toEqual([]);
  });

  it('notes a shop whole when its brand, platform or link time changes, not its name', async () => {
    const database = await openTestDatabase();
    const [shop] = await shopList(database.db);
    if (!shop) throw new Error('demo data: no shop');
    await database.db.delete(aggregateChanges);
    await database.db.update(shops).set({ name: '이름만 바뀐 매장' }).where(eq(shops.id, shop.id));
    expect(await database.db.$count(aggregateChanges)).toBe(0);
    await database.db.update(shops).set({ linkedAt: NOW }).where(eq(shops.id, shop.id));
    expect(await database.db.select().from(aggregateChanges)).toEqual([{ shopId: shop.id, day: null }]);
  });
});

describe('a full build', () => {
  it('runs when asked, on an empty aggregate, and after a run from before the change log', async () => {
    const database = await openTestDatabase();
    expect(await buildDailyAggregate(database.db, { now: NOW, full: true })).toMatchObject({ kind: 'full' });
    expect(await buildDailyAggregate(database.db, { now: NOW })).toMatchObject({ kind: 'incremental' });
    await database.db.update(aggregateRuns).set({ kind: null });
    expect(await buildDailyAggregate(database.db, { now: NOW })).toMatchObject({ kind: 'full' });
    await database.db.delete(reviewStatsDaily);
    await database.db.delete(salesDaily);
    const rebuilt = await buildDailyAggregate(database.db, { now: NOW });
    expect(rebuilt.kind).toBe('full');
    expect(rebuilt.reviewRows).toBeGreaterThan(1000);
    // A clock that went back: the days it no longer covers must go, as in a full build.
    expect(await buildDailyAggregate(database.db, { now: new Date(NOW.getTime() - DAY_MS) })).toMatchObject({
      kind: 'full',
      throughDay: addDays(TODAY, -2),
    });
  });
});

describe('incremental builds after random writes (D-6)', () => {
  const write = fc.oneof(
    fc.record({
      op: fc.constant('insert' as const),
      shop: fc.nat(),
      daysAgo: fc.integer({ min: -1, max: 400 }),
      hour: fc.integer({ min: 0, max: 23 }),
      rating: fc.option(fc.integer({ min: 1, max: 10 }).map((n) => n / 2)),
      replied: fc.boolean(),
    }),
    fc.record({ op: fc.constantFrom('reply' as const, 'unreply' as const, 'delete' as const), review: fc.nat() }),
    fc.record({ op: fc.constant('move' as const), review: fc.nat(), daysAgo: fc.integer({ min: 0, max: 400 }) }),
    fc.record({
      op: fc.constant('sales' as const),
      shop: fc.nat(),
      daysAgo: fc.integer({ min: 0, max: 400 }),
      amount: fc.option(fc.nat({ max: 1_000_000 })),
    }),
    fc.record({ op: fc.constant('relink' as const), shop: fc.nat(), daysAgo: fc.integer({ min: -1, max: 3 }) }),
  );

  // Two copies built after each of six rounds: minutes on a loaded machine, more than the default 30 s.
  it('equal a full rebuild after every day, whatever was written', async () => {
    const pair = [await openTestDatabase(), await openTestDatabase()] as const;
    const shopIds = await shopList(pair[0].db);
    let now = NOW;
    let sequence = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(write, { maxLength: 12 }), fc.integer({ min: 0, max: 2 }), async (writes, advance) => {
        for (const change of writes) {
          sequence += 1;
          await onBoth(pair, (db) => applyWrite(db, change, now, shopIds, sequence));
        }
        now = new Date(now.getTime() + advance * DAY_MS);
        await expectSameAsFull(pair[0], pair[1], now);
      }),
      { numRuns: 6 },
    );
  }, 180_000);
});

type Write =
  | { op: 'insert'; shop: number; daysAgo: number; hour: number; rating: number | null; replied: boolean }
  | { op: 'reply' | 'unreply' | 'delete'; review: number }
  | { op: 'move'; review: number; daysAgo: number }
  | { op: 'sales'; shop: number; daysAgo: number; amount: number | null }
  | { op: 'relink'; shop: number; daysAgo: number };

async function applyWrite(
  db: Db,
  change: Write,
  now: Date,
  shopIds: Awaited<ReturnType<typeof shopList>>,
  sequence: number,
) {
  const shopOf = (n: number) => shopIds[n % shopIds.length] as (typeof shopIds)[number];
  switch (change.op) {
    case 'insert': {
      const shop = shopOf(change.shop);
      await db.insert(reviews).values({
        reviewCode: `R-PROP-${sequence}`,
        brandId: shop.brandId,
        shopId: shop.id,
        writtenAt: at(now, change.daysAgo, change.hour),
        rating: change.rating,
        replyState: change.replied ? 'OWNER_DIRECT' : 'NONE',
      });
      return;
    }
    case 'reply':
    case 'unreply':
      await db
        .update(reviews)
        .set({ replyState: change.op === 'reply' ? 'POSTED' : 'FAILED' })
        .where(eq(reviews.id, await nthReview(db, change.review)));
      return;
    case 'delete':
      await db.delete(reviews).where(eq(reviews.id, await nthReview(db, change.review)));
      return;
    case 'move':
      await db
        .update(reviews)
        .set({ writtenAt: at(now, change.daysAgo, 9) })
        .where(eq(reviews.id, await nthReview(db, change.review)));
      return;
    case 'sales': {
      const shop = shopOf(change.shop);
      const day = addDays(kstToday(now), -change.daysAgo);
      const where = sql`${salesSnapshots.shopId} = ${shop.id} AND ${salesSnapshots.day} = ${day}`;
      if (change.amount === null) await db.delete(salesSnapshots).where(where);
      else
        await db
          .insert(salesSnapshots)
          .values({ shopId: shop.id, day, amount: change.amount })
          .onConflictDoUpdate({ target: [salesSnapshots.shopId, salesSnapshots.day], set: { amount: change.amount } });
      return;
    }
    case 'relink':
      await db
        .update(shops)
        .set({ linkedAt: at(now, change.daysAgo, 6) })
        .where(eq(shops.id, shopOf(change.shop).id));
      return;
  }
}

// Two sessions on one database: PGlite has one connection.
describe.skipIf(DRIVER !== 'postgres')('a write that commits during a build (D-6)', () => {
  it('is built by the next run, never lost', async () => {
    const pair = [await openTestDatabase(), await openTestDatabase()] as const;
    const [incremental, full] = pair;
    const [shop] = await shopList(incremental.db);
    if (!shop) throw new Error('demo data: no shop');
    const review = { reviewCode: 'R-CONCURRENT', brandId: shop.brandId, shopId: shop.id, writtenAt: at(NOW, 30) };
    const writer = await openSameDatabase(incremental);
    try {
      let commit: () => void = () => {};
      const written = writer.db.transaction(async (tx) => {
        await tx.insert(reviews).values(review);
        await new Promise<void>((resolve) => {
          commit = resolve;
        });
      });
      // The build runs while the write is not yet committed: it cannot see it, nor its change.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await buildDailyAggregate(incremental.db, { now: NOW })).toMatchObject({ kind: 'incremental' });
      commit();
      await written;
    } finally {
      await writer.close();
    }
    await full.db.insert(reviews).values(review);
    await expectSameAsFull(incremental, full, NOW);
  });
});

async function openSameDatabase(handle: DatabaseHandle): Promise<DatabaseHandle> {
  const template = inject('postgresTemplate');
  if (!template) throw new Error('PostgreSQL only');
  const [current] = await handle.rows<{ name: string }>(sql`SELECT current_database() AS name`);
  if (!current) throw new Error('no current database');
  return openDatabase({ url: withDatabase(template.url, current.name), maxConnections: 1 });
}
