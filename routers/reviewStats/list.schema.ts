import { z } from 'zod';
import { REVIEW_STATS_GROUP_BY, type ReviewStatsGroupBy } from '../../db/queries/reviewStats';
import { envelopeOf, optional, pageOf, pageParams, platformShopIdParam, withDefault } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { rangeParams, reportRowParts } from '../shared/report';
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
const { absent, variant } = reportRowParts<ReviewStatsGroupBy>('ReviewStatsRow', 'review statistics');

/** A review statistics row, one variant per group_by (routers/shared/report.ts). */
export const reviewStatsRowSchema = z
  .discriminatedUnion('group_by', [
    z
      .object({
        group_by: z.literal('date').describe('Aggregation unit.'),
        date: kstDaySchema.describe('Aggregation day (KST).'),
        platform_shop_id: absent('date'),
        shop_name: absent('date'),
        platform: absent('date'),
        ...counts,
      })
      .meta(variant('date')),
    z
      .object({
        group_by: z.literal('shop').describe('Aggregation unit.'),
        date: absent('shop'),
        platform_shop_id: z.string().describe('Platform-side shop id.'),
        shop_name: z.string().describe('Shop name.'),
        platform: platformSchema,
        ...counts,
      })
      .meta(variant('shop')),
    z
      .object({
        group_by: z.literal('platform').describe('Aggregation unit.'),
        date: absent('platform'),
        platform_shop_id: absent('platform'),
        shop_name: absent('platform'),
        platform: platformSchema,
        ...counts,
      })
      .meta(variant('platform')),
  ])
  .meta({
    id: 'ReviewStatsRow',
    description: 'A review statistics row: its group_by says which fields are filled, the others are null.',
  });

export const listReviewStatsOutput = envelopeOf(pageOf(reviewStatsRowSchema));
