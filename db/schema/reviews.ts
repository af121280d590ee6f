import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  check,
  doublePrecision,
  index,
  pgTable,
  smallint,
  text,
  timestamp,
  unique,
} from 'drizzle-orm/pg-core';
import { brandRef } from './brands';
import { createdAt, instant } from './columns';
import { replyStateEnum } from './enums';
import { brandShopFk, shopRef } from './shops';

/** A collected review; D-7's rules on the row alone are generated columns, `is_critical` is in rules.ts. */
export const reviews = pgTable(
  'reviews',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** Public id; fixed-width so that text order equals age order (D-9 tie-break). */
    reviewCode: text('review_code').notNull(),
    /** Denormalised from the shop so that tenancy is in every index (the brand is every query's scope). */
    brandId: brandRef(),
    shopId: shopRef(),
    /** Whole seconds, as the API writes `date`, so what partners see is what is ordered by (D-9). */
    writtenAt: timestamp('written_at', { withTimezone: true, mode: 'date', precision: 0 }).notNull(),
    content: text('content').notNull().default(''),
    /** 0.5 to 5 in steps of 0.5, or null when the review has no star rating. */
    rating: doublePrecision('rating'),
    /** null when there are none; never an empty array (D-7). */
    menus: text('menus').array(),
    /** The stored AI judgement of the text (D-7). */
    aiNegative: boolean('ai_negative').notNull().default(false),
    replyState: replyStateEnum('reply_state').notNull().default('NONE'),
    /** Text of a posted, owner-direct, scheduled or failed reply; only shown when replied (D-7). */
    replyContent: text('reply_content'),
    replyAt: instant('reply_at'),
    alertSentAt: instant('alert_sent_at'),
    starBucket: smallint('star_bucket')
      .notNull()
      .generatedAlwaysAs(sql`CASE WHEN rating IS NULL THEN 0 WHEN rating < 1 THEN 1 ELSE floor(rating)::smallint END`),
    isReplied: boolean('is_replied').notNull().generatedAlwaysAs(sql`reply_state IN ('POSTED', 'OWNER_DIRECT')`),
    isHandled: boolean('is_handled')
      .notNull()
      .generatedAlwaysAs(sql`reply_state IN ('POSTED', 'OWNER_DIRECT') OR alert_sent_at IS NOT NULL`),
    ...createdAt,
  },
  (t) => [
    unique('reviews_code_uq').on(t.reviewCode),
    brandShopFk('reviews', t),
    // Ascending: drizzle-kit writes .desc() as DESC NULLS LAST, which ORDER BY … DESC cannot use.
    index('reviews_brand_written_idx').on(t.brandId, t.writtenAt, t.reviewCode),
    index('reviews_shop_written_idx').on(t.shopId, t.writtenAt, t.reviewCode),
    check(
      'reviews_rating_steps',
      sql`${t.rating} IS NULL OR (${t.rating} BETWEEN 0.5 AND 5 AND ${t.rating} * 2 = floor(${t.rating} * 2))`,
    ),
    check('reviews_menus_not_empty', sql`${t.menus} IS NULL OR cardinality(${t.menus}) > 0`),
    check('reviews_code_format', sql`${t.reviewCode} ~ '^[A-Za-z0-9_-]{1,64}$'`),
  ],
);

export type NewReview = typeof reviews.$inferInsert;
