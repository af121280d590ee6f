import { z } from 'zod';
import { envelopeOf, pageOf, pageParams } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { kstTimestampSchema } from '../shared/values';

export const listBrandsMeta = readOperation({
  path: '/partner/v1/brands',
  summary: 'List brands',
  description: 'The brands of the partner that owns the key, oldest first.',
  tag: 'Brands',
  errors: ['PARTNER_API_INVALID_PARAMETER'],
});

// The only read without a required parameter: callable with no input at all (`brands.list()`).
export const listBrandsInput = z.object(pageParams).prefault({});

export const brandSchema = z
  .object({
    brand_code: z.string().describe('Brand identifier, used in paths.'),
    display_name: z.string().describe('Brand name.'),
    created_at: kstTimestampSchema.describe('Brand creation time (KST).'),
  })
  .meta({ id: 'Brand' });

export const listBrandsOutput = envelopeOf(pageOf(brandSchema));
