import { z } from 'zod';
import { envelopeOf } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { reviewSchema } from './review.schema';

export const getReviewMeta = readOperation({
  path: '/partner/v1/brands/{brand_code}/reviews/{review_id}',
  summary: 'Get one review',
  description: 'The same object as the review list item.',
  tag: 'Reviews',
  errors: ['PARTNER_API_BRAND_NOT_FOUND', 'PARTNER_API_REVIEW_NOT_FOUND'],
});

export const getReviewParams = { review_id: z.string().describe('Review identifier, from the review list.') };
export const getReviewOutput = envelopeOf(reviewSchema);
