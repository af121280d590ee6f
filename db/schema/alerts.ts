import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  serial,
  smallint,
  text,
  unique,
} from 'drizzle-orm/pg-core';
import { brandRef } from './brands';
import { createdAt, instant } from './columns';
import { managers } from './managers';
import { brandShopFk, shopRef } from './shops';

/** A phone number verified for a brand; `manager_id` null: it belongs to no administrator. */
export const alertNumbers = pgTable(
  'alert_numbers',
  {
    id: serial('id').primaryKey(),
    brandId: brandRef(),
    phoneNumber: text('phone_number').notNull(),
    managerId: integer('manager_id').references(() => managers.id),
    verifiedAt: instant('verified_at').notNull().defaultNow(),
    ...createdAt,
  },
  (t) => [
    unique('alert_numbers_brand_phone_uq').on(t.brandId, t.phoneNumber),
    // (brand_id, id) is what a shop's registration refers to, so the number's brand must be the shop's.
    unique('alert_numbers_brand_id_uq').on(t.brandId, t.id),
    // The owner of a number is an administrator of the same brand.
    foreignKey({
      name: 'alert_numbers_brand_manager_fk',
      columns: [t.brandId, t.managerId],
      foreignColumns: [managers.brandId, managers.id],
    }),
  ],
);

/** A shop's alert recipients: at most 3 (slots 1..3); composite keys keep a number on its own brand's shops. */
export const shopAlertNumbers = pgTable(
  'shop_alert_numbers',
  {
    brandId: brandRef(),
    shopId: shopRef(),
    alertNumberId: integer('alert_number_id')
      .notNull()
      .references(() => alertNumbers.id),
    slot: smallint('slot').notNull(),
    /** false: registered but nothing is sent. */
    enabled: boolean('enabled').notNull().default(true),
    ...createdAt,
  },
  (t) => [
    primaryKey({ columns: [t.shopId, t.alertNumberId] }),
    unique('shop_alert_numbers_slot_uq').on(t.shopId, t.slot),
    check('shop_alert_numbers_slot_range', sql`${t.slot} BETWEEN 1 AND 3`),
    index('shop_alert_numbers_number_idx').on(t.alertNumberId),
    brandShopFk('shop_alert_numbers', t),
    foreignKey({
      name: 'shop_alert_numbers_brand_number_fk',
      columns: [t.brandId, t.alertNumberId],
      foreignColumns: [alertNumbers.brandId, alertNumbers.id],
    }),
  ],
);
