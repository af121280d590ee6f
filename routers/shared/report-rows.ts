import { z } from 'zod';
import type { Page } from '../../db/queries/pagination';

/** A report row's schema pieces: one variant per group_by, the other group_by fields null, so clients narrow by it. */
export function reportRowParts<Unit extends string>(rowId: string, rowName: string) {
  return {
    absent: (unit: Unit) => z.null().describe(`Null for group_by=${unit}.`),
    variant: (unit: Unit) => ({
      id: `${rowId}By${unit.charAt(0).toUpperCase()}${unit.slice(1)}`,
      description: `A ${rowName} row of group_by=${unit}.`,
    }),
  };
}

/** The page typed as the schema's variants; the output parser checks every row against its variant. */
export function pageOfVariants<Schema extends z.ZodType, Row extends { group_by: string }>(
  _rowSchema: Schema,
  page: Page<Row>,
): Page<z.input<Schema>> {
  return page as unknown as Page<z.input<Schema>>;
}
