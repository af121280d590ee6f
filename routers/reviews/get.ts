import { findReview } from '../../db/queries/reviews';
import { PartnerApiError } from '../../server/trpc/errors';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { getReviewMeta, getReviewOutput, getReviewParams } from './get.schema';

export const get = brandProcedure(getReviewParams)
  .meta(getReviewMeta)
  .output(getReviewOutput)
  .query(async ({ ctx, input }) => {
    const review = await findReview(ctx.db, ctx.brand, input.review_id);
    if (!review) throw new PartnerApiError('PARTNER_API_REVIEW_NOT_FOUND');
    return success(review);
  });
