import { z } from 'zod';
import type { Page } from '../../db/queries/pagination';

/**
 * The pieces of a report row's schema (review statistics, sales): one variant per group_by, every key in
 * every variant in the same order, a group_by filling exactly its own fields and the others null, so a
 * client narrows a row by `group_by`. The JSON is the same in every variant; only the schema is more precise.
 */
export function reportRowParts<Unit extends string>(rowId: string, rowName: string) {
  return {
    /** A field this group_by does not fill. */
    absent: (unit: Unit) => z.null().describe(`Null for group_by=${unit}.`),
    /** The variant's OpenAPI component id and description. */
    variant: (unit: Unit) => ({
      id: `${rowId}By${unit.charAt(0).toUpperCase()}${unit.slice(1)}`,
      description: `A ${rowName} row of group_by=${unit}.`,
    }),
  };
}

/**
 * The query's page with its rows typed as the schema's variants. The query builds each row for its
 * group_by, and the procedure's output parser checks every row against its variant on every door, so a
 * row that broke its variant would be a 500, never a wrong answer.
 */
export function pageOfVariants<Schema extends z.ZodType, Row extends { group_by: string }>(
  _rowSchema: Schema,
  page: Page<Row>,
): Page<z.input<Schema>> {
  return page as unknown as Page<z.input<Schema>>;
}
