import { listReviewStats } from '../../db/queries/reviewStats';
import { brandProcedure } from '../../server/trpc';
import { success } from '../shared/envelope';
import { rangeInOrder, resolveRange } from '../shared/range';
import { listReviewStatsMeta, listReviewStatsOutput, listReviewStatsParams, reviewStatsPage } from './list.schema';

/** GET /partner/v1/brands/{brand_code}/review-stats (partner guide § Review statistics). */
export const list = brandProcedure(listReviewStatsParams, rangeInOrder)
  .meta(listReviewStatsMeta)
  .output(listReviewStatsOutput)
  .query(async ({ ctx, input: { brand_code: _brand, page, limit, from, to, ...filters } }) => {
    const range = resolveRange({ from, to }, ctx.today);
    return success(
      reviewStatsPage(await listReviewStats(ctx.db, ctx.brand, { ...filters, ...range }, { page, limit })),
    );
  });
