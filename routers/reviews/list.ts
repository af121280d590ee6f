import { listReviews } from '../../db/queries/reviews';
import { brandProcedure } from '../../server/trpc';
import { success } from '../shared/envelope';
import { listReviewsCheck, listReviewsMeta, listReviewsOutput, listReviewsParams } from './list.schema';

/** GET /partner/v1/brands/{brand_code}/reviews (spec §4.5). */
export const list = brandProcedure(listReviewsParams, listReviewsCheck)
  .meta(listReviewsMeta)
  .output(listReviewsOutput)
  .query(async ({ ctx, input: { brand_code: _brand, page, limit, ...filters } }) =>
    success(await listReviews(ctx.db, ctx.brand, filters, { page, limit })),
  );
