import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { type BrandEntry, findBrand, findPartnersBrands, listBrands } from '../db/queries/brands';
import { findReview, listReviews } from '../db/queries/reviews';
import { listShops } from '../db/queries/shops';
import { findUser, listUsers } from '../db/queries/users';
import { partners } from '../db/schema';
import { DRIVER, openTestDatabase } from './support/database';

// Query functions on the database itself (no procedures): tenancy is a required parameter of every one,
// and nothing of another brand or partner comes back (D-13).
let database: DatabaseHandle;
let demoFoods: number;
let otherEats: number;

beforeAll(async () => {
  database = await openTestDatabase();
  const rows = await database.db.select({ id: partners.id, name: partners.name }).from(partners);
  demoFoods = rows.find((row) => row.name === 'Demo Foods')?.id ?? -1;
  otherEats = rows.find((row) => row.name === 'Other Eats')?.id ?? -1;
});

const all = { page: 1, limit: 100 };

/** The brand a partner's path names, as the brand cache reads it (server/trpc/cache/). */
async function brandInScope(partnerId: number, brandCode: string): Promise<BrandEntry | undefined> {
  const brand = await findBrand(database.db, brandCode);
  return brand?.partnerId === partnerId ? brand : undefined;
}

describe(`tenancy in the queries on ${DRIVER}`, () => {
  it('resolves a brand only inside its partner', async () => {
    expect(await brandInScope(demoFoods, 'chicken-house')).toBeDefined();
    expect(await brandInScope(otherEats, 'chicken-house')).toBeUndefined();
    expect(await brandInScope(demoFoods, 'CHICKEN-HOUSE')).toBeUndefined();
    const own = await listBrands((await findPartnersBrands(database.db, [otherEats])).get(otherEats) ?? [], all);
    expect(own.items.map((brand) => brand.brand_code)).toEqual(['burger-town']);
  });

  it('reads users, shops and reviews of the given brand only', async () => {
    const chicken = await brandInScope(demoFoods, 'chicken-house');
    const pizza = await brandInScope(demoFoods, 'pizza-lab');
    if (!chicken || !pizza) throw new Error('demo brands missing');

    const users = await listUsers(database.db, pizza, all);
    expect(users.items.every((user) => user.user_code.startsWith('u-pz-'))).toBe(true);
    expect(await findUser(database.db, pizza, 'u-ch-001')).toBeUndefined();

    const pizzaShops = new Set((await listShops(database.db, pizza, all)).items.map((shop) => shop.platform_shop_id));
    const chickenShops = new Set(
      (await listShops(database.db, chicken, all)).items.map((shop) => shop.platform_shop_id),
    );
    const pizzaReviews = await listReviews(database.db, pizza, {}, all);
    expect(pizzaReviews.items.length).toBeGreaterThan(0);
    expect(pizzaReviews.items.every((review) => pizzaShops.has(review.platform_shop_id))).toBe(true);

    const chickenReview = (await listReviews(database.db, chicken, {}, { page: 1, limit: 1 })).items[0];
    if (!chickenReview) throw new Error('no chicken-house review');
    expect(chickenShops.has(chickenReview.platform_shop_id)).toBe(true);
    expect(await findReview(database.db, pizza, chickenReview.review_id)).toBeUndefined();
    expect(await findReview(database.db, chicken, chickenReview.review_id)).toEqual(chickenReview);
  });

  it('ignores partner state: that is the auth check’s job, not the query’s', async () => {
    await database.db.update(partners).set({ isActive: false }).where(eq(partners.id, otherEats));
    expect(await brandInScope(otherEats, 'burger-town')).toBeDefined();
  });
});
