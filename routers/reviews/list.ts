import { listReviews } from '../../db/queries/reviews';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { cursorPosition, encodeCursor, nextPageLink } from './cursor';
import { listReviewsCheck, listReviewsMeta, listReviewsOutput, listReviewsParams } from './list.schema';

/** GET /partner/v1/brands/{brand_code}/reviews (partner guide § List reviews of a brand), with cursor pages (D-19). */
export const list = brandProcedure(listReviewsParams, listReviewsCheck)
  .meta(listReviewsMeta)
  .output(listReviewsOutput)
  .query(async ({ ctx, input: { brand_code: brandCode, page, limit, cursor, ...filters } }) => {
    const scope = { brandCode, filters };
    const after = cursor === undefined ? undefined : cursorPosition(cursor, scope);
    const data = await listReviews(ctx.db, ctx.brand, filters, { page, limit, after });
    const last = data.items.at(-1);
    if (data.has_next && last) {
      const next = encodeCursor({ writtenAt: new Date(last.date), reviewCode: last.review_id }, scope);
      ctx.responseHeaders.Link = nextPageLink(listReviewsMeta.openapi.path, scope, limit, next);
    }
    return success(data);
  });
