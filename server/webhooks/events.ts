import { kstTimestamp } from '../../db/kst';
import type { BrandScope } from '../../db/queries/brands';
import type { PositionedChange } from '../../db/queries/review-changes';
import type { NewDelivery } from '../../db/queries/webhook-deliveries';
import { sealFeedCursor } from '../../routers/reviews/feed-cursor';
import type { WebhookEvent } from '../../routers/webhooks/events.schema';
import { newOpaqueId } from './ids';

// The events of an endpoint (D-28), made once: the body is fixed here, and each attempt signs it anew.

type Endpoint = { id: string; partnerId: number; criticalOnly: boolean };

function delivery(endpointId: string, brandId: number | null, reviewCode: string | null, event: WebhookEvent) {
  return {
    id: newOpaqueId('msg'),
    endpointId,
    brandId,
    reviewCode,
    type: event.type,
    body: JSON.stringify(event),
  } satisfies NewDelivery;
}

/**
 * An event per item the feed read, each carrying the sealed feed cursor after it; a critical-only endpoint
 * gets upserts of critical reviews (as the review is when the event is made) and no deletions.
 */
export function reviewEvents(
  endpoint: Endpoint,
  brand: BrandScope,
  items: PositionedChange[],
  cursorKey: Buffer,
  now: Date,
): NewDelivery[] {
  const scope = { brandCode: brand.brandCode, partnerId: endpoint.partnerId };
  const timestamp = kstTimestamp(now);
  return items.flatMap((item) => {
    const data = { brand_code: brand.brandCode, review_id: item.review_id };
    const cursor = sealFeedCursor(cursorKey, item.position, scope);
    if (item.review === null)
      return endpoint.criticalOnly
        ? []
        : [
            delivery(endpoint.id, brand.id, item.review_id, {
              type: 'review.deleted',
              timestamp,
              data: { ...data, review: null, cursor },
            }),
          ];
    if (endpoint.criticalOnly && !item.review.is_critical) return [];
    return [
      delivery(endpoint.id, brand.id, item.review_id, {
        type: 'review.upserted',
        timestamp,
        data: { ...data, review: item.review, cursor },
      }),
    ];
  });
}

/** The feed cannot continue from the endpoint's position in the brand: walk it again. */
export function feedExpiredEvent(endpoint: Endpoint, brand: BrandScope, now: Date): NewDelivery {
  return delivery(endpoint.id, brand.id, null, {
    type: 'feed.expired',
    timestamp: kstTimestamp(now),
    data: { brand_code: brand.brandCode },
  });
}

export function testEvent(endpoint: Endpoint, now: Date): NewDelivery {
  return delivery(endpoint.id, null, null, {
    type: 'webhook.test',
    timestamp: kstTimestamp(now),
    data: { webhook_id: endpoint.id },
  });
}
