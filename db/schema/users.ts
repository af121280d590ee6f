import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, primaryKey, serial, text, unique } from 'drizzle-orm/pg-core';
import { brandRef } from './brands';
import { createdAt } from './columns';
import { accountStatusEnum, platformEnum } from './enums';

/** A shop owner of a brand (partner guide § List users of a brand); `created_at`: when registered in the brand. */
export const brandUsers = pgTable(
  'brand_users',
  {
    id: serial('id').primaryKey(),
    brandId: brandRef(),
    userCode: text('user_code').notNull(),
    displayName: text('display_name').notNull(),
    ...createdAt,
  },
  (t) => [
    unique('brand_users_code_uq').on(t.brandId, t.userCode),
    unique('brand_users_brand_id_uq').on(t.brandId, t.id),
    index('brand_users_order_idx').on(t.brandId, t.createdAt, t.userCode),
    check('brand_users_code_format', sql`${t.userCode} ~ '^[A-Za-z0-9_-]{1,64}$'`),
  ],
);

export const platformAccounts = pgTable(
  'platform_accounts',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => brandUsers.id),
    platform: platformEnum('platform').notNull(),
    status: accountStatusEnum('status').notNull(),
    ...createdAt,
  },
  (t) => [primaryKey({ columns: [t.userId, t.platform] })],
);
