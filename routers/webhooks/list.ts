import { kstTimestamp } from '../../db/kst';
import { paginate } from '../../db/queries/pagination';
import { brandCodesOf, partnerEndpoints } from '../../db/queries/webhooks';
import { partnerReadProcedure } from '../../server/trpc/procedures';
import { success } from '../shared/contract';
import { listWebhooksInput, listWebhooksMeta, listWebhooksOutput } from './list.schema';

const kst = (at: Date | null) => (at ? kstTimestamp(at) : null);

/** GET /partner/v1/webhooks (partner guide § Webhooks, D-28). */
export const list = partnerReadProcedure
  .meta(listWebhooksMeta)
  .input(listWebhooksInput)
  .output(listWebhooksOutput)
  .query(async ({ ctx, input }) => {
    const page = await paginate((window) => partnerEndpoints(ctx.db, ctx.partner.partnerId, window), input);
    const codes = await brandCodesOf(ctx.db, [...new Set(page.items.flatMap((row) => row.brandIds ?? []))]);
    const now = ctx.now().getTime();
    const items = page.items.map((row) => ({
      webhook_id: row.id,
      url: row.url,
      brand_codes: row.brandIds ? row.brandIds.flatMap((id) => codes.get(id) ?? []) : null,
      critical_only: row.criticalOnly,
      status: row.status,
      disabled_reason: row.disabledReason,
      last_success_at: kst(row.lastSuccessAt),
      failing_since: kst(row.failingSince),
      next_attempt_at: row.status === 'ACTIVE' ? kst(row.nextAttemptAt) : null,
      lag_seconds: row.oldestPendingAt ? Math.max(0, Math.floor((now - row.oldestPendingAt.getTime()) / 1000)) : 0,
    }));
    return success({ ...page, items });
  });
