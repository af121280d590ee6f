import { z } from 'zod';
import { envelopeOf } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { userSchema } from './user.schema';

export const getUserMeta = readOperation({
  path: '/partner/v1/brands/{brand_code}/users/{user_code}',
  summary: 'Get one user',
  tag: 'Users',
  errors: ['PARTNER_API_BRAND_NOT_FOUND', 'PARTNER_API_USER_NOT_FOUND'],
});

export const getUserParams = { user_code: z.string().describe('User identifier, from the user list.') };
export const getUserOutput = envelopeOf(userSchema);
