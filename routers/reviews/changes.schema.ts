import { z } from 'zod';
import type { BrandParameters, CallFacts, ParameterIssues } from '../../server/trpc/procedures';
import { envelopeOf, optional, pageParams } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { FEED_CURSOR_TEXT, openFeedCursor } from './feed-cursor';
import { reviewSchema } from './review.schema';

/** The REST path of the feed, also the target of its `Link: rel="next"`. */
export const REVIEW_CHANGES_PATH = '/partner/v1/brands/{brand_code}/review-changes';

export const reviewChangesMeta = readOperation({
  path: REVIEW_CHANGES_PATH,
  summary: 'Review changes of a brand',
  description:
    'Keeps a copy of the brand’s reviews: without cursor, every review the brand has, then every change ' +
    'made from the moment the walk started; with cursor, the changes after it. Apply the items in order ' +
    '(UPSERT replaces, DELETE removes); an item may repeat, none is skipped. A change waits for the oldest ' +
    'transaction still open. next_cursor is always given (equal to the cursor sent when nothing is new); the ' +
    'Link header gives the next page while has_next is true. 410 PARTNER_API_CURSOR_EXPIRED: start again ' +
    'without cursor.',
  tag: 'Reviews',
  errors: ['PARTNER_API_INVALID_PARAMETER', 'PARTNER_API_BRAND_NOT_FOUND', 'PARTNER_API_CURSOR_EXPIRED'],
});

export const reviewChangesParams = {
  cursor: optional(z.string().regex(FEED_CURSOR_TEXT)).describe(
    'Opaque position: next_cursor of an earlier answer for the same brand. Absent: start a walk.',
  ),
  limit: pageParams.limit,
};

/** A cursor the service did not issue for this brand and partner is 400 (D-26), before the brand (D-13). */
export async function reviewChangesCheck(
  input: BrandParameters<typeof reviewChangesParams>,
  issues: ParameterIssues,
  { partnerId, feedCursorKey }: CallFacts,
) {
  if (input.cursor === undefined) return;
  if (!openFeedCursor(await feedCursorKey(), input.cursor, { brandCode: input.brand_code, partnerId })) {
    issues.addIssue({ code: 'custom', message: 'cursor not issued for this brand', path: ['cursor'] });
  }
}

const reviewChangeSchema = z
  .object({
    review_id: z.string().describe('The review changed.'),
    change: z
      .enum(['UPSERT', 'DELETE'])
      .describe('UPSERT: the review as it is now, to add or replace; DELETE: remove it from the copy.'),
    review: reviewSchema.nullable().describe('As GET …/reviews/{review_id} returns it now; null for DELETE.'),
  })
  .meta({ id: 'ReviewChange' });

export const reviewChangesOutput = envelopeOf(
  z.object({
    items: z.array(reviewChangeSchema),
    limit: z.number().int().describe('The page size asked for.'),
    has_next: z.boolean().describe('Whether more can be read now; false: caught up, call again later.'),
    next_cursor: z.string().describe('Where to continue; always present.'),
  }),
);
