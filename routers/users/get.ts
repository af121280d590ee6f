import { findUser } from '../../db/queries/users';
import { PartnerApiError } from '../../server/trpc/errors';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { getUserMeta, getUserOutput, getUserParams } from './get.schema';

export const get = brandProcedure(getUserParams)
  .meta(getUserMeta)
  .output(getUserOutput)
  .query(async ({ ctx, input }) => {
    const user = await findUser(ctx.db, ctx.brand, input.user_code);
    if (!user) throw new PartnerApiError('PARTNER_API_USER_NOT_FOUND');
    return success(user);
  });
