import { listBrands } from '../../db/queries/brands';
import { partnerProcedure } from '../../server/trpc';
import { success } from '../shared/envelope';
import { listBrandsInput, listBrandsMeta, listBrandsOutput } from './list.schema';

/** GET /partner/v1/brands (spec §4.1). */
export const list = partnerProcedure
  .meta(listBrandsMeta)
  .input(listBrandsInput)
  .output(listBrandsOutput)
  .query(async ({ ctx, input }) => success(await listBrands(ctx.db, ctx.partner.partnerId, input)));
