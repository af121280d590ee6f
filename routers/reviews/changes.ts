import { readReviewChanges } from '../../db/queries/review-changes';
import { ReplicaBehindError } from '../../db/replicas';
import { PartnerApiError } from '../../server/trpc/errors';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import {
  REVIEW_CHANGES_PATH,
  reviewChangesCheck,
  reviewChangesMeta,
  reviewChangesOutput,
  reviewChangesParams,
} from './changes.schema';
import { nextPageLink } from './cursor';
import { openFeedCursor, sealFeedCursor } from './feed-cursor';

/** GET /partner/v1/brands/{brand_code}/review-changes (partner guide § Keeping a copy in sync, D-26). */
export const changes = brandProcedure(reviewChangesParams, reviewChangesCheck)
  .meta(reviewChangesMeta)
  .output(reviewChangesOutput)
  .query(async ({ ctx, input: { brand_code: brandCode, cursor, limit } }) => {
    const scope = { brandCode, partnerId: ctx.partner.partnerId };
    const key = await ctx.feedCursorKey();
    // The parameter check has refused a cursor that does not open.
    const from = cursor === undefined ? undefined : openFeedCursor(key, cursor, scope);
    if (from === 'expired') throw new PartnerApiError('PARTNER_API_CURSOR_EXPIRED');
    const page = await readReviewChanges(ctx.db, ctx.brand, from, limit);
    if (page === undefined) throw new PartnerApiError('PARTNER_API_BRAND_NOT_FOUND');
    // A replica may not have replayed the position, or the history or epoch it was issued in: the call runs
    // again on the primary (D-23), which alone refuses a cursor (410).
    if (typeof page === 'string' && ctx.onReplica) throw new ReplicaBehindError();
    if (page === 'expired' || page === 'behind') throw new PartnerApiError('PARTNER_API_CURSOR_EXPIRED');
    // Nothing new: the same position, so the same text as the cursor sent.
    const next = page.next === from && cursor !== undefined ? cursor : sealFeedCursor(key, page.next, scope);
    if (page.hasNext)
      ctx.responseHeaders.Link = nextPageLink(REVIEW_CHANGES_PATH, { brandCode, filters: {} }, limit, next);
    return success({ items: page.items, limit, has_next: page.hasNext, next_cursor: next });
  });
