import { asc } from 'drizzle-orm';
import type { Db } from '../client';
import { kstTimestamp } from '../kst';
import { brands } from '../schema';
import { type PageRequest, paginate } from './pagination';

/** A brand as every brand query takes it (tenancy): its row id, and the code its path names. */
export type BrandScope = { id: number; brandCode: string };

/** A brand's dissatisfaction range (D-7): star buckets from `min` to `max`, both included. */
export type CriticalRange = { min: number; max: number };

/** A brand as the brand cache holds it; a review read takes its range (D-7) from here, on a replica too (D-23). */
export type BrandEntry = BrandScope & {
  partnerId: number;
  criticalRange: CriticalRange;
  listed: { brand_code: string; display_name: string; created_at: string };
};

/** Every brand by its code, for the brand cache, in the list order of D-9 (which the map keeps). */
export async function loadBrandScopes(db: Db): Promise<Map<string, BrandEntry>> {
  const rows = await db
    .select({
      id: brands.id,
      brandCode: brands.brandCode,
      partnerId: brands.partnerId,
      displayName: brands.displayName,
      createdAt: brands.createdAt,
      min: brands.criticalStarMin,
      max: brands.criticalStarMax,
    })
    .from(brands)
    .orderBy(asc(brands.createdAt), asc(brands.brandCode));
  return new Map(
    rows.map(({ displayName, createdAt, min, max, ...brand }) => [
      brand.brandCode,
      {
        ...brand,
        criticalRange: { min, max },
        listed: { brand_code: brand.brandCode, display_name: displayName, created_at: kstTimestamp(createdAt) },
      },
    ]),
  );
}

/** Brands of a partner (partner guide § List brands), oldest first then by code (D-9): the cache's order, paged. */
export function listBrands(cached: Iterable<BrandEntry>, partnerId: number, page: PageRequest) {
  const own = [...cached].filter((brand) => brand.partnerId === partnerId).map((brand) => brand.listed);
  return paginate(async ({ limit, offset }) => own.slice(offset, offset + limit), page);
}
