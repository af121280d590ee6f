import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../client';
import { kstTimestamp } from '../kst';
import { brands } from '../schema';
import { isPublicCode } from '../schema/columns';
import { type PageRequest, paginate } from './pagination';

/** The brand a path names, only if it belongs to the partner: foreign and missing are the same (spec §5.2). */
export async function findBrandInScope(db: Db, scope: { partnerId: number; brandCode: string }) {
  if (!isPublicCode(scope.brandCode)) return undefined;
  const [brand] = await db
    .select({
      id: brands.id,
      brandCode: brands.brandCode,
      criticalStarMin: brands.criticalStarMin,
      criticalStarMax: brands.criticalStarMax,
    })
    .from(brands)
    .where(and(eq(brands.partnerId, scope.partnerId), eq(brands.brandCode, scope.brandCode)))
    .limit(1);
  return brand;
}

/** The brand a request reads, resolved in the caller's scope: every brand query takes it (tenancy). */
export type BrandScope = NonNullable<Awaited<ReturnType<typeof findBrandInScope>>>;

/** Brands of a partner, oldest first then by code (D-9). */
export function listBrands(db: Db, partnerId: number, page: PageRequest) {
  return paginate(async ({ limit, offset }) => {
    const rows = await db
      .select({ brand_code: brands.brandCode, display_name: brands.displayName, createdAt: brands.createdAt })
      .from(brands)
      .where(eq(brands.partnerId, partnerId))
      .orderBy(asc(brands.createdAt), asc(brands.brandCode))
      .limit(limit)
      .offset(offset);
    return rows.map(({ createdAt, ...brand }) => ({ ...brand, created_at: kstTimestamp(createdAt) }));
  }, page);
}
