import { z } from 'zod';
import { SALES_GROUP_BY } from '../../db/queries/sales';
import { envelopeOf } from '../shared/envelope';
import { readOperation } from '../shared/meta';
import { pageOf, pageParams } from '../shared/pagination';
import { optional, platformShopIdParam, withDefault } from '../shared/params';
import { rangeParams } from '../shared/range';
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

/** A sales row (partner guide § Sales): a group_by leaves the other keys null. */
export const salesRowSchema = z
  .object({
    group_by: groupBySchema.describe('Aggregation unit.'),
    date: kstDaySchema.nullable().describe('Aggregation day (KST); only for group_by=date.'),
    week_start: kstDaySchema
      .nullable()
      .describe('Monday of the week (KST); only for group_by=week. Only days inside the range are summed.'),
    platform_shop_id: z.string().nullable().describe('Platform-side shop id; only for group_by=shop.'),
    shop_name: z.string().nullable().describe('Shop name; only for group_by=shop.'),
    platform: salesPlatformSchema.nullable().describe('Platform; for group_by=shop and platform.'),
    user: embeddedUserSchema
      .nullable()
      .describe(
        "The brand user: for group_by=shop the shop's user, for group_by=user the group's; null for shops without a user and for the other units.",
      ),
    sales_amount: z.number().int().min(0).describe('Summed sales of the period, in won.'),
  })
  .meta({ id: 'SalesRow' });

export const listSalesOutput = envelopeOf(pageOf(salesRowSchema));
