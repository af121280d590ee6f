import { addDays } from '../../db/kst';
import type { CallFacts, ParameterIssues } from '../../server/trpc';
import { dayParam, daysInOrder, optional } from './params';

// The day range of the aggregate reads (KST, inclusive); `to` defaults to the request's today, so per request.

/** The default range (partner guide § Dates and time (KST)): `from` defaults to this many days before `to`. */
export const DEFAULT_RANGE_DAYS = 30;

export const rangeParams = {
  from: optional(dayParam()).describe('Start day, KST, inclusive (YYYY-MM-DD). Default: 30 days before to.'),
  to: optional(dayParam()).describe('End day, KST, inclusive (YYYY-MM-DD). Default: today (KST).'),
};

export type DayRange = { from: string; to: string };

export function resolveRange(input: { from?: string | undefined; to?: string | undefined }, today: string): DayRange {
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
