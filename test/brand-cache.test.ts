import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { findPartnerByName } from '../db/queries/apiKeys';
import { brands } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { NOW, openTestDatabase } from './support/database';
import { expectPartnerError } from './support/errors';
import { createBrandWithReviews } from './support/factories';
import { callerFor, testServices } from './support/services';

// A path's brand is resolved from the brand cache (server/trpc/cache/: no round trip per call once
// held), in the partner's scope (D-13). Its stated bound: a change of which partner a brand belongs to
// is seen by every call within 1 s (at once its notice arrived); a brand added is found at once.
let database: Awaited<ReturnType<typeof openTestDatabase>>;
let cacheClock = 0;
let services: ReturnType<typeof testServices>;
beforeAll(async () => {
  database = await openTestDatabase();
  services = testServices(database.db, {}, undefined, { clock: () => cacheClock });
});

describe('brand cache (partner guide § Authentication)', () => {
  it('finds a brand added since the last load at once, without waiting for the bound', async () => {
    const demo = callerFor(services, DEMO_KEYS.active);
    await demo.brands.list({}); // the caches are loaded
    cacheClock += 1;
    const fixture = await createBrandWithReviews(database.db, {
      critical: [1, 2],
      platforms: ['BAEMIN'],
      reviews: [{ shop: 0, writtenAt: new Date(NOW.getTime() - 3_600_000), rating: 5 }],
    });
    cacheClock += 1;
    const { data } = await demo.reviews.list({ brand_code: fixture.brandCode });
    expect(data.items.map((review) => review.review_id)).toEqual(fixture.reviewCodes);
  });

  it('sees a brand moved to another partner once the move reached the cache: gone for the old partner, there for the new', async () => {
    const fixture = await createBrandWithReviews(database.db, { critical: [1, 2], platforms: ['YOGIYO'], reviews: [] });
    const demo = callerFor(services, DEMO_KEYS.active);
    const other = callerFor(services, DEMO_KEYS.other);
    expect((await demo.shops.list({ brand_code: fixture.brandCode })).data.items).toHaveLength(1);
    await expectPartnerError(other.shops.list({ brand_code: fixture.brandCode }), 'PARTNER_API_BRAND_NOT_FOUND');
    const otherEats = await findPartnerByName(database.db, 'Other Eats');
    if (!otherEats) throw new Error('Other Eats missing');
    await database.db.update(brands).set({ partnerId: otherEats.id }).where(eq(brands.id, fixture.brandId));
    // The cache's clock stands still: only the move's notice can tell the cache.
    await services.cache.caughtUp();
    await expectPartnerError(demo.shops.list({ brand_code: fixture.brandCode }), 'PARTNER_API_BRAND_NOT_FOUND');
    expect((await other.shops.list({ brand_code: fixture.brandCode })).data.items).toHaveLength(1);
    expect((await other.brands.list({ limit: 100 })).data.items.map((brand) => brand.brand_code)).toContain(
      fixture.brandCode,
    );
  });

  it('reads a held brand again once the cache has heard nothing for 1 s, and never serves it older', async () => {
    const quiet = testServices(database.db, {}, undefined, { clock: () => cacheClock });
    const fixture = await createBrandWithReviews(database.db, { critical: [1, 2], platforms: ['YOGIYO'], reviews: [] });
    const demo = callerFor(quiet, DEMO_KEYS.active);
    await quiet.cache.start();
    expect((await demo.shops.list({ brand_code: fixture.brandCode })).data.items).toHaveLength(1);
    await quiet.cache.stop(); // it hears no notice and confirms nothing from here on
    const otherEats = await findPartnerByName(database.db, 'Other Eats');
    if (!otherEats) throw new Error('Other Eats missing');
    await database.db.update(brands).set({ partnerId: otherEats.id }).where(eq(brands.id, fixture.brandId));
    // Up to the bound it answers from memory; past it, every call reads the brand.
    cacheClock += 1_000;
    expect((await demo.shops.list({ brand_code: fixture.brandCode })).data.items).toHaveLength(1);
    cacheClock += 1;
    await expectPartnerError(demo.shops.list({ brand_code: fixture.brandCode }), 'PARTNER_API_BRAND_NOT_FOUND');
  });

  it('lists a brand added, oldest first, once the cache is 1 s old at most (D-9)', async () => {
    const demo = callerFor(services, DEMO_KEYS.active);
    const before = (await demo.brands.list({ limit: 100 })).data.items.map((brand) => brand.brand_code);
    cacheClock += 1;
    const fixture = await createBrandWithReviews(database.db, { critical: [1, 2], platforms: ['NAVER'], reviews: [] });
    // Past the bound the list holds it, after every older brand.
    cacheClock += 1_001;
    const after = (await demo.brands.list({ limit: 100 })).data.items.map((brand) => brand.brand_code);
    expect(after).toEqual([...before, fixture.brandCode]);
    const other = callerFor(services, DEMO_KEYS.other);
    expect((await other.brands.list({})).data.items.map((brand) => brand.brand_code)).not.toContain(fixture.brandCode);
  });
});
