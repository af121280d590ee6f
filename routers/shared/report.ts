import { z } from 'zod';
import { addDays } from '../../db/kst';
import type { Page } from '../../db/queries/pagination';
import type { CallFacts, ParameterIssues } from '../../server/trpc/procedures';
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

/**
 * A report row: one variant per group_by, so clients narrow by it. `fields` are every field in order: a schema
 * every variant shares, or null for one a variant fills (`row`'s `filled`) or leaves null.
 */
export function reportRows<Unit extends string, Fields extends { group_by: null } & Record<string, z.ZodType | null>>(
  _units: readonly Unit[],
  rowId: string,
  rowName: string,
  fields: Fields,
) {
  type Shape<Filled> = {
    [F in keyof Fields]: F extends keyof Filled ? Filled[F] : Fields[F] extends null ? z.ZodNull : Fields[F];
  };
  const row = <U extends Unit, Filled extends { [F in keyof Fields]?: z.ZodType }>(unit: U, filled: Filled) => {
    const given = { ...filled, group_by: z.literal(unit).describe('Aggregation unit.') };
    const shape = Object.entries(fields).map(([field, shared]) => {
      const schema = (given as Record<string, z.ZodType | undefined>)[field] ?? shared;
      return [field, schema ?? z.null().describe(`Null for group_by=${unit}.`)];
    });
    const id = `${rowId}By${unit.charAt(0).toUpperCase()}${unit.slice(1)}`;
    return z
      .object(Object.fromEntries(shape) as Shape<typeof given>)
      .meta({ id, description: `A ${rowName} row of group_by=${unit}.` });
  };
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
