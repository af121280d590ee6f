import { z } from 'zod';
import { reviewSchema } from '../reviews/review.schema';
import { kstTimestampSchema } from '../shared/values';

// The events a webhook endpoint receives (D-28, partner guide § Webhooks): the body of each delivery, signed
// by the Standard Webhooks specification. They mirror the review change feed: `cursor` is where the feed
// continues after the event, so a partner can always fall back to polling it.

const brandCode = z.string().describe('The brand the event is about.');
const timestamp = kstTimestampSchema.describe('When the event was made, KST (+09:00); the same on every retry.');
const cursor = z
  .string()
  .describe('The feed position after this event: GET …/review-changes?cursor= continues from here.');

export const reviewUpsertedEventSchema = z
  .object({
    type: z.literal('review.upserted'),
    timestamp,
    data: z.object({
      brand_code: brandCode,
      review_id: z.string().describe('The review added or changed.'),
      review: reviewSchema.describe('As GET …/reviews/{review_id} returns it when the event was made.'),
      cursor,
    }),
  })
  .meta({ id: 'ReviewUpsertedEvent', description: 'A review was added or changed; several changes may be one event.' });

export const reviewDeletedEventSchema = z
  .object({
    type: z.literal('review.deleted'),
    timestamp,
    data: z.object({
      brand_code: brandCode,
      review_id: z.string().describe('The review removed: remove it from the copy.'),
      review: z.null(),
      cursor,
    }),
  })
  .meta({ id: 'ReviewDeletedEvent', description: 'A review was removed.' });

export const feedExpiredEventSchema = z
  .object({
    type: z.literal('feed.expired'),
    timestamp,
    data: z.object({ brand_code: brandCode }),
  })
  .meta({
    id: 'FeedExpiredEvent',
    description:
      'The feed could not continue from where this endpoint stood (a 410 of the feed): walk the brand again ' +
      'without a cursor. Events go on from the brand’s current position.',
  });

export const webhookTestEventSchema = z
  .object({
    type: z.literal('webhook.test'),
    timestamp,
    data: z.object({ webhook_id: z.string().describe('The endpoint tested.') }),
  })
  .meta({ id: 'WebhookTestEvent', description: 'Sent by the operator to check an endpoint; nothing changed.' });

export const webhookEventSchema = z.discriminatedUnion('type', [
  reviewUpsertedEventSchema,
  reviewDeletedEventSchema,
  feedExpiredEventSchema,
  webhookTestEventSchema,
]);

export type WebhookEvent = z.output<typeof webhookEventSchema>;
export type WebhookEventType = WebhookEvent['type'];
