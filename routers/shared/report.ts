import { z } from 'zod';
import { addDays } from '../../db/kst';
import type { Page } from '../../db/queries/pagination';
import type { CallFacts, ParameterIssues } from '../../server/trpc';
import { dayParam, daysInOrder, optional } from './contract';

// What the two aggregate reads (review statistics, sales) share: the day range (KST, inclusive; `to` defaults
// to the request's today, so per request) and rows in one variant per group_by.

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
