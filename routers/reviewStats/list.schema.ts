import { z } from 'zod';
import { REVIEW_STATS_GROUP_BY } from '../../db/queries/reviewStats';
import { envelopeOf } from '../shared/envelope';
import { readOperation } from '../shared/meta';
import { pageOf, pageParams } from '../shared/pagination';
import { optional, platformShopIdParam, withDefault } from '../shared/params';
import { rangeParams } from '../shared/range';
import { kstDaySchema, platformSchema } from '../shared/values';

export const listReviewStatsMeta = readOperation({
  path: '/partner/v1/brands/{brand_code}/review-stats',
  summary: 'Review statistics of a brand',
  description:
    'Review count, reply count and star distribution from the daily aggregate, which refreshes once a day ' +
    'and never includes the current day: counting the review list for the same period can differ. Targets ' +
    'without an aggregate row do not appear. group_by=date is newest first; shop and platform by ' +
    'review_count descending, ties by the grouping key ascending. ' +
    'from later than to is 400 PARTNER_API_INVALID_PARAMETER, judged after the defaults: from alone and later ' +
    'than today is 400 too.',
  tag: 'Review statistics',
  errors: ['PARTNER_API_INVALID_PARAMETER', 'PARTNER_API_BRAND_NOT_FOUND'],
});

const groupBySchema = z.enum(REVIEW_STATS_GROUP_BY);

/** The parameters of review statistics (D-11 for their formats); from > to, after the defaults, is 400. */
export const listReviewStatsParams = {
  ...rangeParams,
  group_by: withDefault(groupBySchema, 'date').describe('Aggregation unit: date (default), shop or platform.'),
  platform: optional(platformSchema).describe('Only this platform.'),
  platform_shop_id: platformShopIdParam(),
  ...pageParams,
};

const count = z.number().int().min(0);

/** A review statistics row (partner guide § Review statistics): a group_by leaves the other keys null. */
export const reviewStatsRowSchema = z
  .object({
    group_by: groupBySchema.describe('Aggregation unit.'),
    date: kstDaySchema.nullable().describe('Aggregation day (KST); only for group_by=date.'),
    platform_shop_id: z.string().nullable().describe('Platform-side shop id; only for group_by=shop.'),
    shop_name: z.string().nullable().describe('Shop name; only for group_by=shop.'),
    platform: platformSchema.nullable().describe('Platform; for group_by=shop and platform.'),
    review_count: count.describe('Reviews written in the period (sum of the days).'),
    reply_count: count.describe('Of those, the ones replied when the aggregate was built.'),
    rating_counts: z
      .object({ one: count, two: count, three: count, four: count, five: count })
      .describe(
        'Review counts per star, by the rating rounded down (4.5 into four, 0.5 into one); reviews without a rating are in none.',
      ),
  })
  .meta({ id: 'ReviewStatsRow' });

export const listReviewStatsOutput = envelopeOf(pageOf(reviewStatsRowSchema));
