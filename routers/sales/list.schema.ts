import { z } from 'zod';
import { SALES_GROUP_BY } from '../../db/queries/sales';
import { envelopeOf, optional, pageOf, pageParams, platformShopIdParam, withDefault } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { rangeParams, reportRows, shopFields } from '../shared/report';
import { kstDaySchema, salesPlatformSchema } from '../shared/values';
import { embeddedUserSchema } from '../shops/list.schema';

export const listSalesMeta = readOperation({
  path: '/partner/v1/brands/{brand_code}/sales',
  summary: 'Sales of a brand',
  description:
    'Summed daily sales snapshots (won) from the daily aggregate, which refreshes once a day, never includes ' +
    'the current day, and leaves out shops linked today. They may differ from platform settlement amounts. ' +
    'Weeks start on Monday; the weeks at both ends of the range count only the days inside it. shop, platform ' +
    'and user by sales_amount descending, ties by the grouping key ascending (the null user last); date and ' +
    'week newest first. group_by=user groups shops without a user under user null, so every group_by has ' +
    'the same total. ' +
    'from later than to is 400 PARTNER_API_INVALID_PARAMETER, judged after the defaults: from alone and later ' +
    'than today is 400 too.',
  tag: 'Sales',
  errors: ['PARTNER_API_INVALID_PARAMETER', 'PARTNER_API_BRAND_NOT_FOUND'],
});

const groupBySchema = z.enum(SALES_GROUP_BY);

/** The parameters of partner guide § Sales (D-11 for their formats); from > to, after the defaults, is 400. */
export const listSalesParams = {
  ...rangeParams,
  group_by: withDefault(groupBySchema, 'shop').describe(
    'Aggregation unit: shop (default), platform, user, date or week.',
  ),
  platform: optional(salesPlatformSchema).describe('Only this platform: BAEMIN, CPEATS or YOGIYO.'),
  platform_shop_id: platformShopIdParam(),
  ...pageParams,
};

const { row, rows } = reportRows(SALES_GROUP_BY, 'SalesRow', 'sales', {
  group_by: null,
  date: null,
  week_start: null,
  platform_shop_id: null,
  shop_name: null,
  platform: null,
  user: null,
  sales_amount: z.number().int().min(0).describe('Summed sales of the period, in won.'),
});

export const salesRowSchema = rows([
  row('shop', {
    ...shopFields,
    platform: salesPlatformSchema,
    user: embeddedUserSchema.nullable().describe("The shop's brand user; null for a shop without one."),
  }),
  row('platform', { platform: salesPlatformSchema }),
  row('user', {
    user: embeddedUserSchema
      .nullable()
      .describe('The brand user of the group; null for the group of the shops without a user (D-10).'),
  }),
  row('date', { date: kstDaySchema.describe('Aggregation day (KST).') }),
  row('week', {
    week_start: kstDaySchema.describe('Monday of the week (KST). Only days inside the range are summed.'),
  }),
]);

export const listSalesOutput = envelopeOf(pageOf(salesRowSchema));
