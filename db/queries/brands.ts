import { asc, eq } from 'drizzle-orm';
import type { Db } from '../client';
import { kstTimestamp } from '../kst';
import { brands } from '../schema';
import { literalLimit, type PageRequest, paginate } from './pagination';

/** A brand as every brand query takes it (tenancy): its row id, and the code its path names. */
export type BrandScope = { id: number; brandCode: string };

/** Where the brand directory holds a brand: under its partner and code, so another partner's is not found. */
export function brandScopeName(partnerId: number, brandCode: string) {
  return `${partnerId}/${brandCode}`;
}

/**
 * Every brand under its partner (spec §5.2: a brand of another partner is a missing one), for the brand
 * directory (server/directory.ts) that resolves a path's brand_code without a round trip (issue 8). Only
 * identity: what a brand's answers depend on (its critical range, D-7) is read by the query itself.
 */
export async function loadBrandScopes(db: Db): Promise<Map<string, BrandScope>> {
  const rows = await db
    .select({ id: brands.id, brandCode: brands.brandCode, partnerId: brands.partnerId })
    .from(brands);
  return new Map(rows.map(({ partnerId, ...brand }) => [brandScopeName(partnerId, brand.brandCode), brand]));
}

/** Brands of a partner, oldest first then by code (D-9). */
export function listBrands(db: Db, partnerId: number, page: PageRequest) {
  return paginate(async ({ limit, offset }) => {
    const rows = await db
      .select({ brand_code: brands.brandCode, display_name: brands.displayName, createdAt: brands.createdAt })
      .from(brands)
      .where(eq(brands.partnerId, partnerId))
      .orderBy(asc(brands.createdAt), asc(brands.brandCode))
      .limit(literalLimit(limit))
      .offset(offset);
    return rows.map(({ createdAt, ...brand }) => ({ ...brand, created_at: kstTimestamp(createdAt) }));
  }, page);
}
