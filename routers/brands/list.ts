import { listBrands } from '../../db/queries/brands';
import { partnerProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { listBrandsInput, listBrandsMeta, listBrandsOutput } from './list.schema';

/** GET /partner/v1/brands (partner guide § List brands), from the brand cache: at most 1 s old, like the key check. */
export const list = partnerProcedure
  .meta(listBrandsMeta)
  .input(listBrandsInput)
  .output(listBrandsOutput)
  .query(async ({ ctx, input }) =>
    success(await listBrands((await ctx.cache.partnerBrands.get(ctx.partner.partnerId)) ?? [], input)),
  );
