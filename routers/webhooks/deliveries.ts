import { kstTimestamp } from '../../db/kst';
import { endpointAttempts, partnerEndpoint } from '../../db/queries/webhooks';
import { PartnerApiError } from '../../server/trpc/errors';
import { partnerReadProcedure } from '../../server/trpc/procedures';
import { nextPageLink } from '../reviews/cursor';
import { success } from '../shared/contract';
import {
  attemptsCursorOf,
  attemptsPositionOf,
  NEWEST,
  webhookDeliveriesInput,
  webhookDeliveriesMeta,
  webhookDeliveriesOutput,
} from './deliveries.schema';

/** GET /partner/v1/webhooks/{webhook_id}/deliveries (partner guide § Webhooks, D-28). */
export const deliveries = partnerReadProcedure
  .meta(webhookDeliveriesMeta)
  .input(webhookDeliveriesInput)
  .output(webhookDeliveriesOutput)
  .query(async ({ ctx, input }) => {
    // Another partner's endpoint is not found, exactly like a missing one.
    const endpoint = await partnerEndpoint(ctx.db, ctx.partner.partnerId, input.webhook_id);
    if (!endpoint) throw new PartnerApiError('PARTNER_API_NOT_FOUND');
    const after = input.cursor === undefined ? undefined : attemptsPositionOf(input.cursor);
    const rows = await endpointAttempts(ctx.db, endpoint.id, after, input.limit);
    const found = rows.slice(0, input.limit);
    const last = found.at(-1);
    const hasNext = rows.length > input.limit;
    const next = last ? attemptsCursorOf(last.attemptedAt, last.id) : (input.cursor ?? NEWEST);
    if (hasNext) {
      const path = `/partner/v1/webhooks/${encodeURIComponent(endpoint.id)}/deliveries`;
      ctx.responseHeaders.Link = nextPageLink(path, { brandCode: '', filters: {} }, input.limit, next);
    }
    return success({
      items: found.map((row) => ({
        event_id: row.eventId,
        type: row.type,
        review_id: row.reviewId,
        attempt: row.attempt,
        status_code: row.statusCode,
        error: row.error,
        duration_ms: row.durationMs,
        attempted_at: kstTimestamp(row.attemptedAt),
        next_attempt_at: row.nextAttemptAt ? kstTimestamp(row.nextAttemptAt) : null,
      })),
      limit: input.limit,
      has_next: hasNext,
      next_cursor: next,
    });
  });
