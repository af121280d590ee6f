import { listShops } from '../../db/queries/shops';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { listShopsMeta, listShopsOutput, listShopsParams } from './list.schema';

export const list = brandProcedure(listShopsParams)
  .meta(listShopsMeta)
  .output(listShopsOutput)
  .query(async ({ ctx, input }) => success(await listShops(ctx.db, ctx.brand, input)));
