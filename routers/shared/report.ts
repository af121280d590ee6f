import { z } from 'zod';
import { addDays } from '../../db/kst';
import type { Page } from '../../db/queries/pagination';
import type { CallFacts, ParameterIssues } from '../../server/trpc';
import { dayParam, daysInOrder, optional } from './contract';

// What review statistics and sales share: the day range (KST, inclusive) and rows in one variant per group_by.

/** The default range (partner guide § Dates and time (KST)): `from` defaults to this many days before `to`. */
const DEFAULT_RANGE_DAYS = 30;

export const rangeParams = {
  from: optional(dayParam()).describe('Start day, KST, inclusive (YYYY-MM-DD). Default: 30 days before to.'),
  to: optional(dayParam()).describe('End day, KST, inclusive (YYYY-MM-DD). Default: today (KST).'),
};

export function resolveRange(input: { from?: string | undefined; to?: string | undefined }, today: string) {
  const to = input.to ?? today;
  return { from: input.from ?? addDays(to, -DEFAULT_RANGE_DAYS), to };
}

/** `from` later than `to` is 400 (D-11), judged after the defaults. */
export function rangeInOrder(
  input: { from?: string | undefined; to?: string | undefined },
  issues: ParameterIssues,
  { today }: CallFacts,
) {
  daysInOrder(resolveRange(input, today), issues);
}

/** A report row: one variant per group_by, the `fields` it does not fill null, so clients narrow by group_by. */
export function reportRows<Unit extends string, Field extends string, Rest extends z.ZodRawShape>(
  _units: readonly Unit[],
  rowId: string,
  rowName: string,
  fields: readonly Field[],
  rest: Rest,
) {
  const row = <U extends Unit, Filled extends { [F in Field]?: z.ZodType }>(unit: U, filled: Filled) =>
    z
      .object({
        group_by: z.literal(unit).describe('Aggregation unit.'),
        ...Object.fromEntries(
          fields.map((field) => [field, filled[field] ?? z.null().describe(`Null for group_by=${unit}.`)]),
        ),
        ...rest,
      } as { group_by: z.ZodLiteral<U> } & { [F in Exclude<Field, keyof Filled>]: z.ZodNull } & Filled & Rest)
      .meta({
        id: `${rowId}By${unit.charAt(0).toUpperCase()}${unit.slice(1)}`,
        description: `A ${rowName} row of group_by=${unit}.`,
      });
  const rows = <const Variants extends readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]]>(
    variants: Variants,
  ) =>
    z.discriminatedUnion('group_by', variants).meta({
      id: rowId,
      description: `A ${rowName} row: its group_by says which fields are filled, the others are null.`,
    });
  return { row, rows };
}

export const shopFields = {
  platform_shop_id: z.string().describe('Platform-side shop id.'),
  shop_name: z.string().describe('Shop name.'),
};

/** The page typed as the schema's variants; the output parser checks every row against its variant. */
export function pageOfVariants<Schema extends z.ZodType, Row extends { group_by: string }>(
  _rowSchema: Schema,
  page: Page<Row>,
): Page<z.input<Schema>> {
  return page as unknown as Page<z.input<Schema>>;
}
