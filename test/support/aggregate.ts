import { asc } from 'drizzle-orm';
import type { DatabaseHandle } from '../../db/client';
import { reviewStatsDaily, salesDaily } from '../../db/schema';

/** Every row of the daily aggregate's two tables, in (shop, day) order, for comparing two builds. */
export async function aggregateRows(db: DatabaseHandle['db']) {
  const stats = await db
    .select()
    .from(reviewStatsDaily)
    .orderBy(asc(reviewStatsDaily.shopId), asc(reviewStatsDaily.day));
  const sales = await db.select().from(salesDaily).orderBy(asc(salesDaily.shopId), asc(salesDaily.day));
  return { stats, sales };
}
