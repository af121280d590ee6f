import { listReviewStats } from '../../db/queries/reviewStats';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { pageOfVariants, rangeInOrder, resolveRange } from '../shared/report';
import { listReviewStatsMeta, listReviewStatsOutput, listReviewStatsParams, reviewStatsRowSchema } from './list.schema';

export const list = brandProcedure(listReviewStatsParams, rangeInOrder)
  .meta(listReviewStatsMeta)
  .output(listReviewStatsOutput)
  .query(async ({ ctx, input: { brand_code: _brand, page, limit, from, to, ...filters } }) => {
    const range = resolveRange({ from, to }, ctx.today);
    const rows = await listReviewStats(ctx.db, ctx.brand, { ...filters, ...range }, { page, limit });
    return success(pageOfVariants(reviewStatsRowSchema, rows));
  });
