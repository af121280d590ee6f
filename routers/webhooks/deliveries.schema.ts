import { z } from 'zod';
import { decodePayload, encodePayload } from '../reviews/cursor';
import { envelopeOf, optional, pageParams } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { kstTimestampSchema } from '../shared/values';

export const webhookDeliveriesMeta = readOperation({
  path: '/partner/v1/webhooks/{webhook_id}/deliveries',
  summary: 'Delivery attempts of a webhook endpoint',
  description:
    'Every attempt to deliver an event to the endpoint, newest first, kept 30 days. Page with next_cursor ' +
    'while has_next is true. A webhook_id that is not yours is 404 PARTNER_API_NOT_FOUND, like a missing one.',
  tag: 'Webhooks',
  errors: ['PARTNER_API_INVALID_PARAMETER', 'PARTNER_API_NOT_FOUND'],
});

/** An attempt's place in the newest-first order: its time (microseconds dropped to ms) and its row id. */
const positionSchema = z.tuple([z.number().int().min(0), z.number().int().min(1)]);

export function attemptsCursorOf(at: Date, id: number): string {
  return encodePayload([at.getTime(), id]);
}

/** Before every attempt: where a first page starts. */
export const NEWEST = attemptsCursorOf(new Date(8.64e15), Number.MAX_SAFE_INTEGER);

export function attemptsPositionOf(cursor: string): { at: Date; id: number } | undefined {
  const payload = decodePayload(cursor, positionSchema);
  return payload && { at: new Date(payload[0]), id: payload[1] };
}

export const webhookDeliveriesInput = z.object({
  webhook_id: z.string().max(64).describe('The endpoint, from GET /partner/v1/webhooks.'),
  cursor: optional(
    z
      .string()
      .max(200)
      .refine((text) => attemptsPositionOf(text) !== undefined, 'cursor malformed'),
  ).describe('Opaque position: next_cursor of an earlier answer for the same endpoint. Absent: the newest first.'),
  limit: pageParams.limit,
});

const attemptSchema = z
  .object({
    event_id: z.string().describe('The event’s id: the webhook-id header of every attempt at it.'),
    type: z.string().describe('review.upserted, review.deleted, feed.expired or webhook.test.'),
    review_id: z.string().nullable().describe('The review the event is about; null for other events.'),
    attempt: z.number().int().describe('1 for the first attempt at the event, then 2, 3, …'),
    status_code: z.number().int().nullable().describe('Your receiver’s HTTP status; null when no answer came.'),
    error: z.string().nullable().describe('Why it failed (or the start of your answer, at most 1 KB); null on a 2xx.'),
    duration_ms: z.number().int().describe('How long the attempt took.'),
    attempted_at: kstTimestampSchema.describe('When it was made (KST).'),
    next_attempt_at: kstTimestampSchema
      .nullable()
      .describe('When the event is tried again (KST); null once delivered or given up.'),
  })
  .meta({ id: 'WebhookAttempt' });

export const webhookDeliveriesOutput = envelopeOf(
  z.object({
    items: z.array(attemptSchema),
    limit: z.number().int().describe('The page size asked for.'),
    has_next: z.boolean().describe('Whether older attempts follow.'),
    next_cursor: z
      .string()
      .describe(
        'Where the next page starts; always present. With has_next false it reads nothing new: newer attempts come first, not after it.',
      ),
  }),
);
