import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, check, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { instant } from './columns';

/**
 * The change feed's record (D-26): a row per review a transaction wrote, noted by triggers (migration 0014).
 * No foreign keys: a row outlives the review it names (a removed review is a DELETE).
 */
export const reviewChanges = pgTable(
  'review_changes',
  {
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    /** The writing transaction's id (xid8 as bigint): PostgreSQL's own order of transactions, no clock. */
    xid: bigint('xid', { mode: 'number' }).notNull().default(sql`(pg_current_xact_id()::text::bigint)`),
    brandId: integer('brand_id').notNull(),
    reviewCode: text('review_code').notNull(),
    /** When the writing transaction started: what the retention prunes by. */
    changedAt: instant('changed_at').notNull().defaultNow(),
  },
  // The feed's order is the only index: each recorded change costs one index entry (pruning, daily, scans).
  (t) => [primaryKey({ name: 'review_changes_pk', columns: [t.brandId, t.xid, t.seq] })],
);

/** Per brand, the last position pruning removed: a cursor before it can no longer be served (410, D-26). */
export const reviewChangesPruned = pgTable('review_changes_pruned', {
  brandId: integer('brand_id').primaryKey(),
  xid: bigint('xid', { mode: 'number' }).notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
});

/**
 * The feed's history (D-26), one row. A cursor carries the history it was issued in (with the server's
 * system identifier): one of another history answers 410. `npm run feed -- expire-cursors` makes a new one.
 */
export const reviewFeedHistory = pgTable(
  'review_feed_history',
  {
    id: boolean('id').primaryKey().default(true),
    history: uuid('history').notNull().defaultRandom(),
    /** Seals every cursor (base64 of 32 bytes): a cursor the service did not issue fails its check (400). */
    cursorKey: text('cursor_key').notNull(),
  },
  (t) => [check('review_feed_history_one_row', sql`${t.id}`)],
);
