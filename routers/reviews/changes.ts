import { readReviewChanges } from '../../db/queries/review-changes';
import { PartnerApiError } from '../../server/trpc/errors';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import {
  feedCursorOf,
  feedPositionOf,
  REVIEW_CHANGES_PATH,
  reviewChangesCheck,
  reviewChangesMeta,
  reviewChangesOutput,
  reviewChangesParams,
} from './changes.schema';
import { nextPageLink } from './cursor';

/** GET /partner/v1/brands/{brand_code}/review-changes (partner guide § Keeping a copy in sync, D-26). */
export const changes = brandProcedure(reviewChangesParams, reviewChangesCheck)
  .meta(reviewChangesMeta)
  .output(reviewChangesOutput)
  .query(async ({ ctx, input: { brand_code: brandCode, cursor, limit } }) => {
    const scope = { brandCode, partnerId: ctx.partner.partnerId };
    const from = cursor === undefined ? undefined : feedPositionOf(cursor, scope);
    const page = await readReviewChanges(ctx.db, ctx.brand, from, limit);
    if (page === undefined) throw new PartnerApiError('PARTNER_API_BRAND_NOT_FOUND');
    if (page === 'expired') throw new PartnerApiError('PARTNER_API_CURSOR_EXPIRED');
    // Nothing new: the same position, so the same text as the cursor sent.
    const next = page.next === from && cursor !== undefined ? cursor : feedCursorOf(page.next, scope);
    if (page.hasNext)
      ctx.responseHeaders.Link = nextPageLink(REVIEW_CHANGES_PATH, { brandCode, filters: {} }, limit, next);
    return success({ items: page.items, limit, has_next: page.hasNext, next_cursor: next });
  });
