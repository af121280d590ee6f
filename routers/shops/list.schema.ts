import { z } from 'zod';
import { envelopeOf, pageOf, pageParams } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { managerRoleSchema, platformSchema, shopStatusSchema } from '../shared/values';

export const listShopsMeta = readOperation({
  path: '/partner/v1/brands/{brand_code}/shops',
  summary: 'List shops of a brand',
  description: 'Shops by name, platform and platform_shop_id.',
  tag: 'Shops',
  errors: ['PARTNER_API_INVALID_PARAMETER', 'PARTNER_API_BRAND_NOT_FOUND'],
});

export const listShopsParams = pageParams;

/** The user object embedded in shop and sales rows (partner guide § List shops of a brand, § Sales). */
export const embeddedUserSchema = z
  .object({ user_code: z.string(), display_name: z.string() })
  .meta({ id: 'EmbeddedUser' });

const managerSchema = z
  .object({
    display_name: z.string().describe('Manager name.'),
    role: managerRoleSchema.nullable().describe('OWNER, MANAGER or SUPERVISOR; null when none.'),
  })
  .meta({ id: 'Manager' });

export const shopSchema = z
  .object({
    name: z.string().describe('Shop name as registered on the platform.'),
    platform: platformSchema,
    platform_shop_id: z.string().describe('Platform-side shop id; matches the same field in reviews.'),
    category_name: z.string().describe('Platform category.'),
    status: shopStatusSchema.describe(
      'ACTIVE: linked, reviews collected; INACTIVE: link stopped, nothing collected; FAILED: platform login error, nothing collected.',
    ),
    user: embeddedUserSchema.nullable().describe('The brand user the shop belongs to; null if none.'),
    managers: z
      .array(managerSchema)
      .describe('Head-office administrators assigned to the shop (not shop owners; assignment does not mean alerts).'),
    critical_review_alerts: z
      .array(
        z.object({
          phone_number: z.string().describe('Number that receives alerts.'),
          enabled: z.boolean().describe('false: registered but nothing is sent.'),
          manager: managerSchema.nullable().describe('Owner of the number; null if it belongs to no administrator.'),
        }),
      )
      .max(3)
      .describe('The authoritative list of dissatisfied-review alert recipients; at most 3.'),
  })
  .meta({ id: 'Shop' });

export const listShopsOutput = envelopeOf(pageOf(shopSchema));
