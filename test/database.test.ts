import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { hashApiKey } from '../db/keys';
import {
  alertNumbers,
  apiKeys,
  brands,
  brandUsers,
  managers,
  reviews,
  shopAlertNumbers,
  shopManagers,
  shops,
} from '../db/schema';
import { DRIVER, openTestDatabase } from './support/database';

// Rules the database itself enforces, so no writer can break them (D-3, D-4, D-7).
let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase();
});

async function rejects(write: Promise<unknown>) {
  await expect(write).rejects.toThrow();
}

describe(`database rules on ${DRIVER}`, () => {
  it('stores keys only as SHA-256 hashes (D-4)', async () => {
    const rows = await database.db.select({ hash: apiKeys.keyHash, prefix: apiKeys.displayPrefix }).from(apiKeys);
    expect(rows.map((row) => row.hash)).toContain(hashApiKey('pk_test_demo_active'));
    expect(JSON.stringify(rows)).not.toContain('pk_test_demo_active');
    await rejects(
      database.db
        .insert(apiKeys)
        .values({ partnerId: 1, keyHash: 'pk_test_plain'.padEnd(64, 'x'), displayPrefix: 'x' }),
    );
  });

  it('allows at most 3 alert numbers per shop', async () => {
    const [shop] = await database.db.select().from(shops).where(eq(shops.platformShopId, '10482913'));
    if (!shop) throw new Error('fixture shop missing');
    const [number] = await database.db
      .insert(alertNumbers)
      .values({ brandId: shop.brandId, phoneNumber: '010-0000-0004' })
      .returning();
    if (!number) throw new Error('insert failed');
    for (const slot of [0, 1, 4]) {
      await rejects(
        database.db
          .insert(shopAlertNumbers)
          .values({ brandId: shop.brandId, shopId: shop.id, alertNumberId: number.id, slot }),
      );
    }
  });

  it('derives the star bucket, replied and handled in one place (D-7)', async () => {
    const rows = await database.rows<{
      rating: number | null;
      star_bucket: number;
      reply_state: string;
      is_replied: boolean;
    }>(sql`SELECT DISTINCT rating, star_bucket, reply_state, is_replied FROM reviews ORDER BY 1, 3`);
    for (const row of rows) {
      const expected = row.rating === null ? 0 : Math.max(1, Math.floor(row.rating));
      expect(row.star_bucket).toBe(expected);
      expect(row.is_replied).toBe(row.reply_state === 'POSTED' || row.reply_state === 'OWNER_DIRECT');
    }
    expect(rows.some((row) => row.rating === 0.5 && row.star_bucket === 1)).toBe(true);
    expect(rows.some((row) => row.rating === 4.5 && row.star_bucket === 4)).toBe(true);
  });

  it('keeps rows of one brand from pointing at another brand’s shop, user or administrator (tenancy)', async () => {
    const [chicken] = await database.db.select().from(shops).where(eq(shops.platformShopId, '10482913'));
    const [pizzaUser] = await database.db.select().from(brandUsers).where(eq(brandUsers.userCode, 'u-pz-001'));
    if (!chicken || !pizzaUser) throw new Error('fixtures missing');
    const otherBrand = pizzaUser.brandId;
    await rejects(
      database.db
        .insert(reviews)
        .values({ reviewCode: 'X1', brandId: otherBrand, shopId: chicken.id, writtenAt: new Date() }),
    );
    await rejects(database.db.update(shops).set({ userId: pizzaUser.id }).where(eq(shops.id, chicken.id)));
    const [pizzaManager] = await database.db.select().from(managers).where(eq(managers.brandId, otherBrand)).limit(1);
    if (!pizzaManager) throw new Error('no pizza-lab manager');
    await rejects(
      database.db
        .insert(alertNumbers)
        .values({ brandId: chicken.brandId, phoneNumber: '010-9999-0000', managerId: pizzaManager.id }),
    );
  });

  it('links a shop only to administrators and alert numbers of its own brand', async () => {
    const [pizzaUser] = await database.db.select().from(brandUsers).where(eq(brandUsers.userCode, 'u-pz-001'));
    const [ownBrand] = await database.db.select().from(brands).where(eq(brands.brandCode, 'chicken-house'));
    if (!pizzaUser || !ownBrand) throw new Error('fixtures missing');
    const [pizza, own] = [pizzaUser.brandId, ownBrand.id];
    // A shop of the brand with no alert numbers yet, so slot 1 is free.
    const [shop] = await database.db
      .select({ id: shops.id })
      .from(shops)
      .leftJoin(shopAlertNumbers, eq(shopAlertNumbers.shopId, shops.id))
      .where(sql`${shops.brandId} = ${own} AND ${shopAlertNumbers.shopId} IS NULL`)
      .limit(1);
    if (!shop) throw new Error('no shop without alert numbers');
    const [pizzaManager, ownManager] = await database.db
      .insert(managers)
      .values([
        { brandId: pizza, displayName: '타브랜드' },
        { brandId: own, displayName: '본브랜드' },
      ])
      .returning();
    const [pizzaNumber, ownNumber] = await database.db
      .insert(alertNumbers)
      .values([
        { brandId: pizza, phoneNumber: '010-7777-0001' },
        { brandId: own, phoneNumber: '010-7777-0002' },
      ])
      .returning();
    if (!pizzaManager || !ownManager || !pizzaNumber || !ownNumber) throw new Error('insert failed');

    // Another brand's administrator or verified number, whichever brand the link row claims.
    for (const brandId of [own, pizza]) {
      await rejects(database.db.insert(shopManagers).values({ brandId, shopId: shop.id, managerId: pizzaManager.id }));
      await rejects(
        database.db
          .insert(shopAlertNumbers)
          .values({ brandId, shopId: shop.id, alertNumberId: pizzaNumber.id, slot: 1 }),
      );
    }
    // The same links within the brand are accepted: the brand keys, not the rows' shape, refused the others.
    await database.db.insert(shopManagers).values({ brandId: own, shopId: shop.id, managerId: ownManager.id });
    await database.db
      .insert(shopAlertNumbers)
      .values({ brandId: own, shopId: shop.id, alertNumberId: ownNumber.id, slot: 1 });
  });

  it('stores review times in whole seconds, so the shown date is what lists are ordered by (D-9)', async () => {
    const [shop] = await database.db.select().from(shops).where(eq(shops.platformShopId, '10482913'));
    if (!shop) throw new Error('fixture shop missing');
    await database.db.insert(reviews).values({
      reviewCode: 'W1',
      brandId: shop.brandId,
      shopId: shop.id,
      writtenAt: new Date('2026-03-01T03:00:00.400Z'),
    });
    const [stored] = await database.db
      .select({ writtenAt: reviews.writtenAt })
      .from(reviews)
      .where(eq(reviews.reviewCode, 'W1'));
    expect(stored?.writtenAt.toISOString()).toBe('2026-03-01T03:00:00.000Z');
  });

  it('rejects ratings off the 0.5 steps, empty menu arrays and codes unsafe in a path', async () => {
    const [review] = await database.db.select().from(reviews).limit(1);
    if (!review) throw new Error('no review');
    const base = { brandId: review.brandId, shopId: review.shopId, writtenAt: new Date() };
    await rejects(database.db.insert(reviews).values({ ...base, reviewCode: 'T1', rating: 4.3 }));
    await rejects(database.db.insert(reviews).values({ ...base, reviewCode: 'T2', rating: 0 }));
    await rejects(database.db.insert(reviews).values({ ...base, reviewCode: 'T3', menus: [] }));
    await rejects(database.db.insert(reviews).values({ ...base, reviewCode: 'a/b' }));
    await rejects(
      database.db.update(brands).set({ criticalStarMin: 3, criticalStarMax: 2 }).where(eq(brands.id, review.brandId)),
    );
  });
});
