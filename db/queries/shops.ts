import { asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { alertNumbers, brandUsers, managers, shopAlertNumbers, shopManagers, shops } from '../schema';
import type { BrandScope } from './brands';
import { literalLimit, type PageRequest, paginate } from './pagination';

/** Shops of a brand by name, platform (as text), platform_shop_id (D-9), with user, managers and alerts. */
export function listShops(db: Db, brand: BrandScope, page: PageRequest) {
  return paginate(async ({ limit, offset }) => {
    const rows = await db
      .select({
        id: shops.id,
        name: shops.name,
        platform: shops.platform,
        platform_shop_id: shops.platformShopId,
        category_name: shops.categoryName,
        status: shops.status,
        userCode: brandUsers.userCode,
        userName: brandUsers.displayName,
      })
      .from(shops)
      .leftJoin(brandUsers, eq(brandUsers.id, shops.userId))
      .where(eq(shops.brandId, brand.id))
      .orderBy(asc(shops.name), asc(sql`${shops.platform}::text`), asc(shops.platformShopId))
      .limit(literalLimit(limit))
      .offset(offset);
    const ids = rows.map((row) => row.id);
    const [assigned, alerts] = await Promise.all([managersOf(db, ids), alertsOf(db, ids)]);
    return rows.map(({ id, userCode, userName, ...shop }) => ({
      ...shop,
      user: userCode === null || userName === null ? null : { user_code: userCode, display_name: userName },
      managers: assigned.filter((row) => row.shopId === id).map(({ display_name, role }) => ({ display_name, role })),
      critical_review_alerts: alerts
        .filter((row) => row.shopId === id)
        .map(({ phone_number, enabled, managerName, managerRole }) => ({
          phone_number,
          enabled,
          // The owner of the number, whether or not assigned to this shop (partner guide § List shops of a brand).
          manager: managerName === null ? null : { display_name: managerName, role: managerRole },
        })),
    }));
  }, page);
}

function managersOf(db: Db, shopIds: number[]) {
  if (!shopIds.length) return Promise.resolve([]);
  return db
    .select({ shopId: shopManagers.shopId, display_name: managers.displayName, role: managers.role })
    .from(shopManagers)
    .innerJoin(managers, eq(managers.id, shopManagers.managerId))
    .where(inArray(shopManagers.shopId, shopIds))
    .orderBy(asc(shopManagers.shopId), asc(managers.displayName), asc(managers.id));
}

function alertsOf(db: Db, shopIds: number[]) {
  if (!shopIds.length) return Promise.resolve([]);
  return db
    .select({
      shopId: shopAlertNumbers.shopId,
      phone_number: alertNumbers.phoneNumber,
      enabled: shopAlertNumbers.enabled,
      managerName: managers.displayName,
      managerRole: managers.role,
    })
    .from(shopAlertNumbers)
    .innerJoin(alertNumbers, eq(alertNumbers.id, shopAlertNumbers.alertNumberId))
    .leftJoin(managers, eq(managers.id, alertNumbers.managerId))
    .where(inArray(shopAlertNumbers.shopId, shopIds))
    .orderBy(asc(shopAlertNumbers.shopId), asc(shopAlertNumbers.slot));
}
