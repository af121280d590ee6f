import { z } from 'zod';
import { REVIEW_STATS_GROUP_BY } from '../../db/queries/reviewStats';
import { envelopeOf, optional, pageOf, pageParams, platformShopIdParam, withDefault } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { rangeParams, reportRows, shopFields } from '../shared/report';
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
const counts = {
  review_count: count.describe('Reviews written in the period (sum of the days).'),
  reply_count: count.describe('Of those, the ones replied when the aggregate was built.'),
  rating_counts: z
    .object({ one: count, two: count, three: count, four: count, five: count })
    .describe(
      'Review counts per star, by the rating rounded down (4.5 into four, 0.5 into one); reviews without a rating are in none.',
    ),
};
const fields = { group_by: null, date: null, platform_shop_id: null, shop_name: null, platform: null, ...counts };
const { row, rows } = reportRows(REVIEW_STATS_GROUP_BY, 'ReviewStatsRow', 'review statistics', fields);

export const reviewStatsRowSchema = rows([
  row('date', { date: kstDaySchema.describe('Aggregation day (KST).') }),
  row('shop', { ...shopFields, platform: platformSchema }),
  row('platform', { platform: platformSchema }),
]);

export const listReviewStatsOutput = envelopeOf(pageOf(reviewStatsRowSchema));
