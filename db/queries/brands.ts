import { asc, sql } from 'drizzle-orm';
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

/** The brands of these codes, for the brand cache. */
export async function findBrands(db: Db, brandCodes: readonly string[]): Promise<Map<string, BrandEntry>> {
  const rows = await db
    .select(brandColumns)
    .from(brands)
    .where(sql`${brands.brandCode} = ANY(string_to_array(${brandCodes.join(',')}, ','))`);
  return new Map(rows.map((row) => [row.brandCode, brandEntry(row)]));
}

/** The brand of this code, if any (the benches and tests name a brand by its code). */
export async function findBrand(db: Db, brandCode: string): Promise<BrandEntry | undefined> {
  return (await findBrands(db, [brandCode])).get(brandCode);
}

/** Each partner's brands in the list order of D-9 (brands_partner_idx), for the brand cache; [] for none. */
export async function findPartnersBrands(db: Db, partnerIds: readonly number[]): Promise<Map<number, BrandEntry[]>> {
  const rows = await db
    .select(brandColumns)
    .from(brands)
    .where(sql`${brands.partnerId} = ANY(string_to_array(${partnerIds.join(',')}, ',')::int[])`)
    .orderBy(asc(brands.partnerId), asc(brands.createdAt), asc(brands.brandCode));
  const lists = new Map(partnerIds.map((id): [number, BrandEntry[]] => [id, []]));
  for (const row of rows) lists.get(row.partnerId)?.push(brandEntry(row));
  return lists;
}

const brandColumns = {
  id: brands.id,
  brandCode: brands.brandCode,
  partnerId: brands.partnerId,
  displayName: brands.displayName,
  createdAt: brands.createdAt,
  min: brands.criticalStarMin,
  max: brands.criticalStarMax,
};

function brandEntry({
  displayName,
  createdAt,
  min,
  max,
  ...brand
}: {
  id: number;
  brandCode: string;
  partnerId: number;
  displayName: string;
  createdAt: Date;
  min: number;
  max: number;
}): BrandEntry {
  return {
    ...brand,
    criticalRange: { min, max },
    listed: { brand_code: brand.brandCode, display_name: displayName, created_at: kstTimestamp(createdAt) },
  };
}

/** A partner's brands (partner guide § List brands), oldest first then by code (D-9), as the cache holds them, paged. */
export function listBrands(own: readonly BrandEntry[], page: PageRequest) {
  return paginate(async ({ limit, offset }) => own.slice(offset, offset + limit).map((brand) => brand.listed), page);
}
