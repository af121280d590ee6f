import { sql } from 'drizzle-orm';
import type { Db } from '../client';

/**
 * The oldest transaction still open on the server that holds a transaction id: the feed reads no change at
 * or after it (D-26). Any role sees its id, process and application; its age needs pg_read_all_stats (or
 * the same role), else `seconds` is null. A prepared transaction has a gid and no process.
 */
export type FeedHolder = {
  xid: string;
  pid: number | null;
  database: string | null;
  application: string | null;
  gid: string | null;
  /** Since the transaction started (a prepared one: since it was prepared), on the server's clock. */
  seconds: number | null;
};

const holders = sql`(
  SELECT backend_xid AS xid, pid, datname::text AS database, application_name AS application, NULL::text AS gid,
    extract(epoch FROM clock_timestamp() - xact_start)::float8 AS seconds
  FROM pg_stat_activity WHERE backend_xid IS NOT NULL
  UNION ALL
  SELECT transaction, NULL, database::text, NULL, gid, extract(epoch FROM clock_timestamp() - prepared)::float8
  FROM pg_prepared_xacts) holders`;

export async function oldestFeedHolder(db: Db): Promise<FeedHolder | undefined> {
  const [holder] = await db
    .select({
      xid: sql<string>`xid::text`,
      pid: sql<number | null>`pid`,
      database: sql<string | null>`database`,
      application: sql<string | null>`application`,
      gid: sql<string | null>`gid`,
      seconds: sql<number | null>`seconds`,
    })
    .from(holders)
    .orderBy(sql`age(xid) DESC`)
    .limit(1);
  return holder;
}
