import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, serial, smallint, text } from 'drizzle-orm/pg-core';
import { createdAt } from './columns';
import { partners } from './partners';

// Public codes are URL-safe so they can stand in a path unencoded (check constraints below).

export const brands = pgTable(
  'brands',
  {
    id: serial('id').primaryKey(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id),
    brandCode: text('brand_code').notNull().unique(),
    displayName: text('display_name').notNull(),
    /** The dissatisfaction star range (D-7), inclusive, against the rating rounded down (0.5 as 1). */
    criticalStarMin: smallint('critical_star_min').notNull().default(1),
    criticalStarMax: smallint('critical_star_max').notNull().default(2),
    /** Bumped when every cursor of the brand's change feed must start again (D-26): a range change, a TRUNCATE. */
    feedEpoch: integer('feed_epoch').notNull().default(0),
    ...createdAt,
  },
  (t) => [
    index('brands_partner_idx').on(t.partnerId, t.createdAt, t.brandCode),
    check('brands_code_format', sql`${t.brandCode} ~ '^[A-Za-z0-9_-]{1,64}$'`),
    check(
      'brands_critical_range',
      sql`${t.criticalStarMin} BETWEEN 1 AND 5 AND ${t.criticalStarMax} BETWEEN 1 AND 5 AND ${t.criticalStarMin} <= ${t.criticalStarMax}`,
    ),
  ],
);

/** A row's brand: every table of a brand's data carries it, so tenancy is in every key. */
export const brandRef = () =>
  integer('brand_id')
    .notNull()
    .references(() => brands.id);
