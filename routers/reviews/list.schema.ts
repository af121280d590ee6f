import { z } from 'zod';
import type { BrandParameters } from '../../server/trpc/procedures';
import {
  booleanParam,
  dayParam,
  daysInOrder,
  decimalParam,
  envelopeOf,
  optional,
  pageOf,
  pageParams,
  platformShopIdParam,
  textParam,
} from '../shared/contract';
import { readOperation } from '../shared/meta';
import { platformSchema } from '../shared/values';
import { CURSOR_TEXT, decodeCursor } from './cursor';
import { reviewSchema } from './review.schema';

export const listReviewsMeta = readOperation({
  path: '/partner/v1/brands/{brand_code}/reviews',
  summary: 'List reviews of a brand',
  description:
    'Reviews of all shops of the brand, newest first, read in real time from collected reviews. ' +
    'When has_next is true, the Link header (rel="next") gives the next page by cursor. ' +
    'from later than to, or rating_min above rating_max, is 400 PARTNER_API_INVALID_PARAMETER.',
  tag: 'Reviews',
  errors: ['PARTNER_API_INVALID_PARAMETER', 'PARTNER_API_BRAND_NOT_FOUND'],
});

/** The filters of partner guide § List reviews of a brand (D-11 for their formats). */
export const listReviewsParams = {
  from: optional(dayParam()).describe('Review date start, KST, inclusive (YYYY-MM-DD).'),
  to: optional(dayParam()).describe('Review date end, KST, inclusive (YYYY-MM-DD).'),
  platform_shop_id: platformShopIdParam(),
  platform: optional(platformSchema).describe('Only this platform.'),
  rating_min: optional(decimalParam(0, 5)).describe(
    'Lower bound, inclusive, on the rating rounded down (4.5 as 4, 0.5 as 1); a review without rating counts as 0.',
  ),
  rating_max: optional(decimalParam(0, 5)).describe(
    'Upper bound, inclusive, on the rating rounded down; rating_max=0 returns only reviews without rating.',
  ),
  replied: optional(booleanParam()).describe('true or false: filter by reply state.'),
  critical: optional(booleanParam()).describe('true: only dissatisfied reviews; false: exclude them.'),
  handled: optional(booleanParam()).describe('true or false: filter by handled state.'),
  keyword: optional(textParam(50)).describe(
    'At most 50 characters; case-insensitive partial match in the content or in any menu name. % and _ are literal.',
  ),
  ...pageParams,
  cursor: optional(z.string().regex(CURSOR_TEXT)).describe(
    'Opaque position from the rel="next" URL of the Link header of the previous answer: the page of the ' +
      'items after it, newest first. Only with the same filters and page absent or 1; otherwise 400.',
  ),
};

/** Rules across the parameters (D-11): from ≤ to, rating_min ≤ rating_max; D-19: a cursor on page 1, of this scope. */
export function listReviewsCheck(
  input: BrandParameters<typeof listReviewsParams>,
  issues: Parameters<typeof daysInOrder>[1],
) {
  daysInOrder(input, issues);
  if (input.rating_min !== undefined && input.rating_max !== undefined && input.rating_min > input.rating_max)
    issues.addIssue({ code: 'custom', message: 'rating_min is above rating_max', path: ['rating_min'] });
  // The path's brand_code comes with the parameters: a cursor is bound to it too.
  const { cursor, page, limit: _limit, brand_code: brandCode, ...filters } = input;
  if (cursor === undefined) return;
  if (page !== 1) issues.addIssue({ code: 'custom', message: 'cursor is only valid on page 1', path: ['cursor'] });
  const decoded = decodeCursor(cursor, { brandCode, filters });
  if ('refused' in decoded) issues.addIssue({ code: 'custom', message: `cursor ${decoded.refused}`, path: ['cursor'] });
}

export const listReviewsOutput = envelopeOf(pageOf(reviewSchema));
