import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ReviewFilters, ReviewPosition } from '../../db/queries/reviews';
import { PUBLIC_CODE } from '../../db/schema/columns';
import { PartnerApiError } from '../../server/trpc/errors';

// D-19: base64url of [seconds, review_id, fingerprint]; not signed, as a forged one reads nothing page/limit can't.

/** The characters of base64url without padding: anything else is malformed before it is decoded. */
export const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,200}$/;

/** Positions a cursor may hold: the days a filter may name (from 1900, D-11) up to year 9999. */
export const FIRST_SECOND = Date.UTC(1900, 0, 1) / 1000 - 86_400;
export const LAST_SECOND = Date.UTC(9999, 11, 31) / 1000;

const payloadSchema = z.tuple([
  z.number().int().min(FIRST_SECOND).max(LAST_SECOND),
  z.string().regex(PUBLIC_CODE),
  z.string(),
]);

export type CursorScope = { brandCode: string; filters: ReviewFilters };

/** What a cursor is bound to, shortened: a cursor made for another scope is refused (400). */
export function fingerprintOf(scope: unknown): string {
  return createHash('sha256').update(JSON.stringify(scope)).digest('base64url').slice(0, 16);
}

function fingerprint({ brandCode, filters }: CursorScope): string {
  const given = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return fingerprintOf([brandCode, given]);
}

export function encodeCursor(position: ReviewPosition, scope: CursorScope): string {
  return encodePayload([Math.floor(position.writtenAt.getTime() / 1000), position.reviewCode, fingerprint(scope)]);
}

export function encodePayload(payload: unknown): string {
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/** A cursor's payload, if the text is the canonical spelling of one `schema` accepts. */
export function decodePayload<T extends z.ZodType>(cursor: string, schema: T): z.output<T> | undefined {
  if (!CURSOR_TEXT.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  // Node's decoder skips what it cannot read; only the canonical spelling of the bytes is ours.
  if (bytes.toString('base64url') !== cursor) return undefined;
  try {
    return schema.parse(JSON.parse(bytes.toString('utf8')));
  } catch {
    return undefined;
  }
}

/** The position a cursor holds, or why it is refused here (D-19, both 400). */
export function decodeCursor(
  cursor: string,
  scope: CursorScope,
): { position: ReviewPosition } | { refused: 'malformed' | 'other filters' } {
  const parsed = decodePayload(cursor, payloadSchema);
  if (!parsed) return { refused: 'malformed' };
  const [seconds, reviewCode, madeUnder] = parsed;
  if (madeUnder !== fingerprint(scope)) return { refused: 'other filters' };
  return { position: { writtenAt: new Date(seconds * 1000), reviewCode } };
}

export function cursorPosition(cursor: string, scope: CursorScope): ReviewPosition {
  const decoded = decodeCursor(cursor, scope);
  if ('refused' in decoded)
    throw new PartnerApiError('PARTNER_API_INVALID_PARAMETER', { cause: new Error(`cursor ${decoded.refused}`) });
  return decoded.position;
}

/** The `Link` header of D-19: the next page under the same filters and limit, percent-encoded. */
export function nextPageLink(path: string, scope: CursorScope, limit: number, cursor: string): string {
  const parameters: [string, string][] = [
    ...Object.entries(scope.filters).flatMap(([name, value]): [string, string][] =>
      value === undefined ? [] : [[name, String(value)]],
    ),
    ['limit', String(limit)],
    ['cursor', cursor],
  ];
  const query = parameters.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
  const target = path.replace('{brand_code}', encodeURIComponent(scope.brandCode));
  return `<${target}?${query}>; rel="next"`;
}
