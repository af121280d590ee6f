import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { brands, partners, reviews, shops } from '../../db/schema';
import type { platformEnum, replyStateEnum } from '../../db/schema/enums';

type Platform = (typeof platformEnum.enumValues)[number];
type ReplyState = (typeof replyStateEnum.enumValues)[number];

export type ReviewSpec = {
  shop: number;
  writtenAt: Date;
  content?: string;
  rating?: number | null;
  menus?: string[] | null;
  aiNegative?: boolean;
  replyState?: ReplyState;
  replyContent?: string | null;
  replyAt?: Date | null;
  alertSentAt?: Date | null;
};

export type BrandFixture = {
  brandCode: string;
  brandId: number;
  shops: { id: number; platform: Platform; platformShopId: string; name: string }[];
  reviewCodes: string[];
};

/**
 * A fresh brand of Demo Foods (readable with the active demo key) with shops on the given platforms and
 * the given reviews, so a test controls every row it reads. Codes are unique per call.
 */
export async function createBrandWithReviews(
  db: Db,
  spec: { critical: [number, number]; platforms: Platform[]; reviews: ReviewSpec[] },
): Promise<BrandFixture> {
  const tag = randomBytes(4).toString('hex');
  const [partner] = await db.select({ id: partners.id }).from(partners).where(eq(partners.name, 'Demo Foods'));
  if (!partner) throw new Error('Demo Foods missing: the factory needs the demo data');
  const [brand] = await db
    .insert(brands)
    .values({
      partnerId: partner.id,
      brandCode: `fx-${tag}`,
      displayName: `Fixture ${tag}`,
      criticalStarMin: spec.critical[0],
      criticalStarMax: spec.critical[1],
    })
    .returning({ id: brands.id, brandCode: brands.brandCode });
  if (!brand) throw new Error('brand insert failed');
  const shopRows = await db
    .insert(shops)
    .values(
      spec.platforms.map((platform, index) => ({
        brandId: brand.id,
        platform,
        platformShopId: `${tag}${index}`,
        name: `픽스처 ${index}호점`,
        categoryName: '치킨',
        status: 'ACTIVE' as const,
      })),
    )
    .returning({ id: shops.id, platform: shops.platform, platformShopId: shops.platformShopId, name: shops.name });
  const fixture = { brandCode: brand.brandCode, brandId: brand.id, shops: shopRows };
  return { ...fixture, reviewCodes: await addReviews(db, fixture, spec.reviews, tag) };
}

/**
 * Reviews written to a fixture's brand, `shop` indexing its shops; their codes in the given order (they
 * sort in it too). A change a test makes after its fixture (for the feed or a webhook to see) comes this way.
 */
export async function addReviews(
  db: Db,
  fixture: Omit<BrandFixture, 'reviewCodes'>,
  specs: ReviewSpec[],
  tag = randomBytes(4).toString('hex'),
): Promise<string[]> {
  const reviewCodes = specs.map((_, index) => `F${tag}${String(index).padStart(5, '0')}`);
  if (specs.length) {
    await db.insert(reviews).values(
      specs.map((review, index) => {
        const shop = fixture.shops[review.shop];
        if (!shop) throw new Error(`no shop ${review.shop}`);
        return {
          reviewCode: reviewCodes[index] ?? '',
          brandId: fixture.brandId,
          shopId: shop.id,
          writtenAt: review.writtenAt,
          content: review.content ?? '',
          rating: review.rating ?? null,
          menus: review.menus ?? null,
          aiNegative: review.aiNegative ?? false,
          replyState: review.replyState ?? 'NONE',
          replyContent: review.replyContent ?? null,
          replyAt: review.replyAt ?? null,
          alertSentAt: review.alertSentAt ?? null,
        };
      }),
    );
  }
  return reviewCodes;
}
