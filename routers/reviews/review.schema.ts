import { z } from 'zod';
import { kstTimestampSchema, platformSchema } from '../shared/values';

/** A review (partner guide § Get one review); the list and the single read share it, so the two are identical. */
export const reviewSchema = z
  .object({
    review_id: z.string().describe('Review identifier, used in the single-review path.'),
    platform_shop_id: z.string().describe('Platform-side shop id; matches the shop field.'),
    shop_name: z.string(),
    platform: platformSchema,
    date: kstTimestampSchema.describe('Review written time (KST).'),
    content: z.string().describe('Review text; empty string for a star-only review.'),
    rating: z
      .number()
      .min(0.5)
      .max(5)
      .multipleOf(0.5)
      .nullable()
      .describe(
        '0.5 to 5 in steps of 0.5; null without a star rating. Where a rating is rounded down, 0.5 counts as 1.',
      ),
    menus: z.array(z.string()).min(1).nullable().describe('Ordered menus; null when none.'),
    reply_status: z
      .enum(['REPLIED', 'NOT_REPLIED'])
      .describe('An owner-direct reply counts as REPLIED; scheduled or failed replies as NOT_REPLIED.'),
    reply_content: z.string().nullable().describe('Reply text; null when not replied.'),
    reply_date: kstTimestampSchema.nullable().describe('Reply time (KST); null when not replied.'),
    is_critical: z
      .boolean()
      .describe(
        "Dissatisfied review: the rating rounded down is in the brand's dissatisfaction range, or the AI judged the text negative.",
      ),
    is_handled: z.boolean().describe('A reply was posted or a negative-review alert was sent.'),
  })
  .meta({ id: 'Review' });
