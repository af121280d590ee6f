import { listSales } from '../../db/queries/sales';
import { brandProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { pageOfVariants, rangeInOrder, resolveRange } from '../shared/report';
import { listSalesMeta, listSalesOutput, listSalesParams, salesRowSchema } from './list.schema';

export const list = brandProcedure(listSalesParams, rangeInOrder)
  .meta(listSalesMeta)
  .output(listSalesOutput)
  .query(async ({ ctx, input: { brand_code: _brand, page, limit, from, to, ...filters } }) => {
    const range = resolveRange({ from, to }, ctx.today);
    const rows = await listSales(ctx.db, ctx.brand, { ...filters, ...range }, { page, limit });
    return success(pageOfVariants(salesRowSchema, rows));
  });
