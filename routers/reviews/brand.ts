import type { Db } from '../../db/client';
import type { BrandScope } from '../../db/queries/brands';
import { loadCriticalRange, type ReviewBrand } from '../../db/queries/reviews/rules';
import { PartnerApiError } from '../../server/errors';

/**
 * The brand as a review read takes it. On the primary the statement reads the critical range itself; on a
 * replica (D-23) the range is read on the primary first, so a change of range applies at once (D-7)
 * however far behind the replica is.
 */
export async function reviewBrand(ctx: { db: Db; primary: Db; brand: BrandScope }): Promise<ReviewBrand> {
  if (ctx.db === ctx.primary) return ctx.brand;
  const criticalRange = await loadCriticalRange(ctx.primary, ctx.brand);
  // Removed since the brand directory's last load.
  if (!criticalRange) throw new PartnerApiError('PARTNER_API_BRAND_NOT_FOUND');
  return { ...ctx.brand, criticalRange };
}
