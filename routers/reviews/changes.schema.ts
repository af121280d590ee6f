import { z } from 'zod';
import type { FeedPosition } from '../../db/queries/review-changes';
import { PUBLIC_CODE } from '../../db/schema/columns';
import type { BrandParameters, CallFacts, ParameterIssues } from '../../server/trpc/procedures';
import { envelopeOf, optional, pageParams } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { CURSOR_TEXT, decodePayload, encodePayload, FIRST_SECOND, fingerprintOf, LAST_SECOND } from './cursor';
import { reviewSchema } from './review.schema';

/** The REST path of the feed, also the target of its `Link: rel="next"`. */
export const REVIEW_CHANGES_PATH = '/partner/v1/brands/{brand_code}/review-changes';

export const reviewChangesMeta = readOperation({
  path: REVIEW_CHANGES_PATH,
  summary: 'Review changes of a brand',
  description:
    'Keeps a copy of the brand’s reviews: without cursor, every review the brand has, then every change ' +
    'made from the moment the walk started; with cursor, the changes after it. Apply the items in order ' +
    '(UPSERT replaces, DELETE removes); an item may repeat, none is skipped. A change waits for the oldest ' +
    'transaction still open. next_cursor is always given (equal to the cursor sent when nothing is new); the ' +
    'Link header gives the next page while has_next is true. 410 PARTNER_API_CURSOR_EXPIRED: start again ' +
    'without cursor.',
  tag: 'Reviews',
  errors: ['PARTNER_API_INVALID_PARAMETER', 'PARTNER_API_BRAND_NOT_FOUND', 'PARTNER_API_CURSOR_EXPIRED'],
});

export const reviewChangesParams = {
  cursor: optional(z.string().regex(CURSOR_TEXT)).describe(
    'Opaque position: next_cursor of an earlier answer for the same brand. Absent: start a walk.',
  ),
  limit: pageParams.limit,
};

/** A malformed, tampered or foreign cursor is 400 (D-26), before the brand is looked up (D-13). */
export function reviewChangesCheck(
  input: BrandParameters<typeof reviewChangesParams>,
  issues: ParameterIssues,
  facts: CallFacts,
) {
  if (input.cursor !== undefined && !feedPositionOf(input.cursor, { brandCode: input.brand_code, ...facts })) {
    issues.addIssue({ code: 'custom', message: 'cursor malformed or of another brand', path: ['cursor'] });
  }
}

const reviewChangeSchema = z
  .object({
    review_id: z.string().describe('The review changed.'),
    change: z
      .enum(['UPSERT', 'DELETE'])
      .describe('UPSERT: the review as it is now, to add or replace; DELETE: remove it from the copy.'),
    review: reviewSchema.nullable().describe('As GET …/reviews/{review_id} returns it now; null for DELETE.'),
  })
  .meta({ id: 'ReviewChange' });

export const reviewChangesOutput = envelopeOf(
  z.object({
    items: z.array(reviewChangeSchema),
    limit: z.number().int().describe('The page size asked for.'),
    has_next: z.boolean().describe('Whether more can be read now; false: caught up, call again later.'),
    next_cursor: z.string().describe('Where to continue; always present.'),
  }),
);

// The feed's cursor: base64url of its position and a fingerprint of the brand and the key's partner. Not
// signed: a forged position reads nothing the same key could not read by walking again.

type CursorScope = { brandCode: string; partnerId: number };

const counter = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const payloadSchema = z.union([
  z.tuple([
    z.literal('w'),
    counter,
    counter,
    counter,
    z.number().int().min(FIRST_SECOND).max(LAST_SECOND).nullable(),
    z.string().regex(PUBLIC_CODE).nullable(),
    z.string(),
  ]),
  z.tuple([z.literal('c'), counter, counter, counter, z.string()]),
]);

function fingerprint({ brandCode, partnerId }: CursorScope): string {
  return fingerprintOf([brandCode, partnerId]);
}

export function feedCursorOf(position: FeedPosition, scope: CursorScope): string {
  if (position.kind === 'changes')
    return encodePayload(['c', position.epoch, position.xid, position.seq, fingerprint(scope)]);
  const { epoch, start, after } = position;
  const seconds = after ? Math.floor(after.writtenAt.getTime() / 1000) : null;
  return encodePayload(['w', epoch, start.xid, start.seq, seconds, after?.reviewCode ?? null, fingerprint(scope)]);
}

/** The position a cursor holds, if it is well formed and was made for this brand and partner. */
export function feedPositionOf(cursor: string, scope: CursorScope): FeedPosition | undefined {
  const payload = decodePayload(cursor, payloadSchema);
  if (!payload || payload.at(-1) !== fingerprint(scope)) return undefined;
  if (payload[0] === 'c') return { kind: 'changes', epoch: payload[1], xid: payload[2], seq: payload[3] };
  const [, epoch, xid, seq, seconds, reviewCode] = payload;
  if ((seconds === null) !== (reviewCode === null)) return undefined;
  const after =
    seconds === null || reviewCode === null ? undefined : { writtenAt: new Date(seconds * 1000), reviewCode };
  return { kind: 'walk', epoch, start: { xid, seq }, after };
}
