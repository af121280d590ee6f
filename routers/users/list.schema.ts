import { envelopeOf, pageOf, pageParams } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { userSchema } from './user.schema';

export const listUsersMeta = readOperation({
  path: '/partner/v1/brands/{brand_code}/users',
  summary: 'List users of a brand',
  description: 'Shop owners registered in the brand, in registration order.',
  tag: 'Users',
  errors: ['PARTNER_API_INVALID_PARAMETER', 'PARTNER_API_BRAND_NOT_FOUND'],
});

export const listUsersParams = pageParams;
export const listUsersOutput = envelopeOf(pageOf(userSchema));
