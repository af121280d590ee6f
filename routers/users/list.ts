import { listUsers } from '../../db/queries/users';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { listUsersMeta, listUsersOutput, listUsersParams } from './list.schema';

export const list = brandProcedure(listUsersParams)
  .meta(listUsersMeta)
  .output(listUsersOutput)
  .query(async ({ ctx, input }) => success(await listUsers(ctx.db, ctx.brand, input)));
