import { bigint, date, index, integer, pgTable, primaryKey, serial, text } from 'drizzle-orm/pg-core';
import { brandRef } from './brands';
import { instant } from './columns';
import { brandShopFk, shopRef } from './shops';

/** The daily aggregate (D-6); `running*` are prefix sums per shop, so a range's total is two probes. */
export const reviewStatsDaily = pgTable(
  'review_stats_daily',
  {
    shopId: shopRef(),
    day: date('day', { mode: 'string' }).notNull(),
    brandId: brandRef(),
    reviewCount: integer('review_count').notNull(),
    replyCount: integer('reply_count').notNull(),
    ratingOne: integer('rating_one').notNull(),
    ratingTwo: integer('rating_two').notNull(),
    ratingThree: integer('rating_three').notNull(),
    ratingFour: integer('rating_four').notNull(),
    ratingFive: integer('rating_five').notNull(),
    runningRows: integer('running_rows').notNull(),
    runningReviewCount: integer('running_review_count').notNull(),
    runningReplyCount: integer('running_reply_count').notNull(),
    runningRatingOne: integer('running_rating_one').notNull(),
    runningRatingTwo: integer('running_rating_two').notNull(),
    runningRatingThree: integer('running_rating_three').notNull(),
    runningRatingFour: integer('running_rating_four').notNull(),
    runningRatingFive: integer('running_rating_five').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.shopId, t.day] }),
    index('review_stats_daily_brand_day_idx').on(t.brandId, t.day),
    brandShopFk('review_stats_daily', t),
  ],
);

/** One row per (shop, KST day) with a sales snapshot, before today (D-6); `running*` as in review_stats_daily. */
export const salesDaily = pgTable(
  'sales_daily',
  {
    shopId: shopRef(),
    day: date('day', { mode: 'string' }).notNull(),
    brandId: brandRef(),
    salesAmount: bigint('sales_amount', { mode: 'number' }).notNull(),
    runningRows: integer('running_rows').notNull(),
    runningSalesAmount: bigint('running_sales_amount', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.shopId, t.day] }),
    index('sales_daily_brand_day_idx').on(t.brandId, t.day),
    brandShopFk('sales_daily', t),
  ],
);

export const aggregateRuns = pgTable('aggregate_runs', {
  id: serial('id').primaryKey(),
  throughDay: date('through_day', { mode: 'string' }).notNull(),
  startedAt: instant('started_at').notNull(),
  finishedAt: instant('finished_at').notNull(),
  /** `full` or `incremental` (D-6); null on runs before the change log existed, so the next build is full. */
  kind: text('kind', { enum: ['full', 'incremental'] }),
});

/** The incremental build's change log (D-6), filled by triggers; no key, so a writer never waits for the build. */
export const aggregateChanges = pgTable('aggregate_changes', {
  shopId: integer('shop_id').notNull(),
  day: date('day', { mode: 'string' }),
});
