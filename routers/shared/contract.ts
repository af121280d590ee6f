import { z } from 'zod';
import { isCalendarDay } from '../../db/kst';
import type { ParameterIssues } from '../../server/trpc/procedures';

// What every operation's contract is built from: its query parameters, its page, and the success envelope.

// Query parameters (D-11) take a string (REST) or a typed value (tRPC); z.preprocess, as trpc-to-openapi would
// rewrite plain z.number()/z.boolean() into coercing ones ("false" → true).

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

/** Free text of at most `max` code points (D-8); NUL cannot be stored in PostgreSQL text, so it is a bad parameter. */
export function textParam(max: number) {
  return z
    .string()
    .refine((text) => [...text].length <= max, `at most ${max} characters`)
    .refine((text) => !text.includes('\u0000'), 'must not contain NUL')
    .meta({ maxLength: max });
}

const absentIfEmpty = (value: unknown) => (value === '' ? undefined : value);

export function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess(absentIfEmpty as (value: z.input<T> | undefined) => unknown, schema.optional());
}

export function withDefault<T extends z.ZodType>(schema: T, fallback: z.output<T>) {
  const defaulted = schema.optional().transform((value) => (value === undefined ? fallback : value));
  return z.preprocess(absentIfEmpty as (value: z.input<T> | undefined) => unknown, defaulted);
}

/** `from` later than `to` is 400 on every endpoint that takes both (D-11). Days compare as text. */
export function daysInOrder(input: { from?: string | undefined; to?: string | undefined }, issues: ParameterIssues) {
  if (input.from !== undefined && input.to !== undefined && input.from > input.to)
    issues.addIssue({ code: 'custom', message: 'from is later than to', path: ['from'] });
}

export function platformShopIdParam() {
  return optional(textParam(100)).describe(
    'Only this shop. The same id on two platforms names two shops: add platform to pick one.',
  );
}

export const MAX_LIMIT = 100;

/** `page` and `limit` of every list (D-11): page ≥ 1, limit 1..100, anything else is 400. */
export const pageParams = {
  page: withDefault(integerParam(1, Number.MAX_SAFE_INTEGER), 1).describe('Page number, from 1. Default 1.'),
  limit: withDefault(integerParam(1, MAX_LIMIT), 20).describe('Items per page, 1 to 100. Default 20.'),
};

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    page: z.number().int().describe('The page returned.'),
    limit: z.number().int().describe('The page size asked for.'),
    has_next: z.boolean().describe('Whether a further page has at least one item.'),
  });
}

// The success envelope (partner guide § Responses): every procedure returns through `success`.

export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({ status: z.literal('SUCCESS'), status_code: z.literal(200), message: z.literal('OK'), data });
}

export function success<T>(data: T) {
  return { status: 'SUCCESS' as const, status_code: 200 as const, message: 'OK' as const, data };
}
