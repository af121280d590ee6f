import { foreignKey, index, integer, pgTable, primaryKey, serial, text, unique } from 'drizzle-orm/pg-core';
import { brandRef } from './brands';
import { createdAt } from './columns';
import { managerRoleEnum } from './enums';
import { brandShopFk, shopRef } from './shops';

/** A head-office administrator of a brand. Not a shop owner; being assigned does not mean receiving alerts. */
export const managers = pgTable(
  'managers',
  {
    id: serial('id').primaryKey(),
    brandId: brandRef(),
    displayName: text('display_name').notNull(),
    /** null is a real value: an administrator without a role (partner guide § List shops of a brand). */
    role: managerRoleEnum('role'),
    ...createdAt,
  },
  (t) => [index('managers_brand_idx').on(t.brandId), unique('managers_brand_id_uq').on(t.brandId, t.id)],
);

/** Administrators assigned to shops; composite keys make a cross-brand link impossible. */
export const shopManagers = pgTable(
  'shop_managers',
  {
    brandId: brandRef(),
    shopId: shopRef(),
    managerId: integer('manager_id')
      .notNull()
      .references(() => managers.id),
    ...createdAt,
  },
  (t) => [
    primaryKey({ columns: [t.shopId, t.managerId] }),
    index('shop_managers_manager_idx').on(t.managerId),
    brandShopFk('shop_managers', t),
    foreignKey({
      name: 'shop_managers_brand_manager_fk',
      columns: [t.brandId, t.managerId],
      foreignColumns: [managers.brandId, managers.id],
    }),
  ],
);
