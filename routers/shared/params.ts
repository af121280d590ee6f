import { z } from 'zod';
import { isCalendarDay } from '../../db/kst';
import type { ParameterIssues } from '../../server/trpc';

// Query-string parameters (D-11). REST sends every value as a string; the tRPC transport and createCaller
// send typed values. Each helper accepts both, exactly, and nothing else. They are z.preprocess pipes on
// purpose: trpc-to-openapi rewrites plain z.number()/z.boolean() schemas into coercing ones ("false" →
// true, " " → 0) but leaves pipes alone (trpc-to-openapi's coercion). A repeated parameter arrives
// as an array and fails every helper (400). An empty value counts as absent: `optional`/`withDefault`
// apply that first, outside the parsing, so `keyword=` and `page=` behave like no parameter at all.

type Raw<T> = T | string | undefined;

/** An integer in [min, max]: a JSON number, or a string of digits (never `1e3`, `0x10`, `1.0`, ` 1`). */
export function integerParam(min: number, max: number) {
  return z.preprocess(
    (value: Raw<number>) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value),
    z.number().int().min(min).max(max),
  );
}

/** A decimal number in [min, max]: a JSON number, or a plain decimal string such as `4` or `4.5`. */
export function decimalParam(min: number, max: number) {
  return z.preprocess(
    (value: Raw<number>) => (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value),
    z.number().min(min).max(max),
  );
}

/** `true` or `false`, exactly. */
export function booleanParam() {
  return z.preprocess(
    (value: Raw<boolean | 'true' | 'false'>) => (value === 'true' ? true : value === 'false' ? false : value),
    z.boolean(),
  );
}

/** The earliest day a parameter may name: older instants are outside what PostgreSQL and KST rules handle. */
export const FIRST_DAY = '1900-01-01';

/** A real calendar day written YYYY-MM-DD, from 1900, read as a KST day (D-5). */
export function dayParam() {
  return z
    .string()
    .refine((day) => isCalendarDay(day) && day >= FIRST_DAY, 'must be a calendar day YYYY-MM-DD from 1900-01-01')
    .meta({ format: 'date', example: '2026-11-01' });
}

/**
 * Free text of at most `max` characters, counted as code points so Hangul counts one each (D-8). A NUL
 * character cannot be stored or compared in PostgreSQL text, so it is a bad parameter, not a server error.
 */
export function textParam(max: number) {
  return z
    .string()
    .refine((text) => [...text].length <= max, `at most ${max} characters`)
    .refine((text) => !text.includes('\u0000'), 'must not contain NUL')
    .meta({ maxLength: max });
}

const absentIfEmpty = (value: unknown) => (value === '' ? undefined : value);

/** An optional parameter; an empty value counts as absent. */
export function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess(absentIfEmpty as (value: z.input<T> | undefined) => unknown, schema.optional());
}

/** A parameter with a default; an empty value counts as absent. */
export function withDefault<T extends z.ZodType>(schema: T, fallback: z.output<T>) {
  const defaulted = schema.optional().transform((value) => (value === undefined ? fallback : value));
  return z.preprocess(absentIfEmpty as (value: z.input<T> | undefined) => unknown, defaulted);
}

/** `from` later than `to` is 400 on every endpoint that takes both (D-11). Days compare as text. */
export function daysInOrder(input: { from?: string | undefined; to?: string | undefined }, issues: ParameterIssues) {
  if (input.from !== undefined && input.to !== undefined && input.from > input.to) {
    issues.addIssue({ code: 'custom', message: 'from is later than to', path: ['from'] });
  }
}

/** `platform_shop_id` of the review list, review-stats and sales: only this shop. */
export function platformShopIdParam() {
  return optional(textParam(100)).describe(
    'Only this shop. The same id on two platforms names two shops: add platform to pick one.',
  );
}
