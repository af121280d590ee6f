import { foreignKey, index, integer, type PgColumn, pgTable, serial, text, unique } from 'drizzle-orm/pg-core';
import { brandRef } from './brands';
import { createdAt, instant } from './columns';
import { platformEnum, shopStatusEnum } from './enums';
import { brandUsers } from './users';

export const shops = pgTable(
  'shops',
  {
    id: serial('id').primaryKey(),
    brandId: brandRef(),
    /** null: the shop belongs to no brand user (a shop's `user` may be null: partner guide § List shops of a brand). */
    userId: integer('user_id').references(() => brandUsers.id),
    platform: platformEnum('platform').notNull(),
    platformShopId: text('platform_shop_id').notNull(),
    name: text('name').notNull(),
    categoryName: text('category_name').notNull(),
    status: shopStatusEnum('status').notNull(),
    /** When the link was made; a shop linked today is left out of the daily aggregate (D-6). */
    linkedAt: instant('linked_at').notNull().defaultNow(),
    ...createdAt,
  },
  (t) => [
    // (brand_id, id) is what rows that denormalise the brand refer to, so their brand must be the shop's.
    unique('shops_brand_id_uq').on(t.brandId, t.id),
    // A shop's user is a user of the shop's brand.
    foreignKey({
      name: 'shops_brand_user_fk',
      columns: [t.brandId, t.userId],
      foreignColumns: [brandUsers.brandId, brandUsers.id],
    }),
    unique('shops_platform_shop_uq').on(t.brandId, t.platform, t.platformShopId),
    index('shops_order_idx').on(t.brandId, t.name, t.platform, t.platformShopId),
    index('shops_user_idx').on(t.userId),
  ],
);

export const shopRef = () =>
  integer('shop_id')
    .notNull()
    .references(() => shops.id);

/** A row that denormalises the brand refers to (brand_id, shop_id), so its brand must be the shop's. */
export const brandShopFk = (table: string, t: { brandId: PgColumn; shopId: PgColumn }) =>
  foreignKey({
    name: `${table}_brand_shop_fk`,
    columns: [t.brandId, t.shopId],
    foreignColumns: [shops.brandId, shops.id],
  });
