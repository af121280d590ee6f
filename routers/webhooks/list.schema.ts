import { z } from 'zod';
import { WEBHOOK_STATUSES } from '../../db/schema/webhooks';
import { envelopeOf, pageOf, pageParams } from '../shared/contract';
import { readOperation } from '../shared/meta';
import { kstTimestampSchema } from '../shared/values';

export const WEBHOOKS_PATH = '/partner/v1/webhooks';

export const listWebhooksMeta = readOperation({
  path: WEBHOOKS_PATH,
  summary: 'List webhook endpoints',
  description:
    'The webhook endpoints of the key’s partner, oldest first, with how their deliveries stand. Endpoints are ' +
    'set up by the operator; events and signatures: partner guide § Webhooks.',
  tag: 'Webhooks',
  errors: ['PARTNER_API_INVALID_PARAMETER'],
});

export const listWebhooksInput = z.object(pageParams).prefault({});

export const webhookSchema = z
  .object({
    webhook_id: z.string().describe('The endpoint’s id (wh_…), as the operator gave it to you.'),
    url: z.string().describe('Where events are delivered.'),
    brand_codes: z
      .array(z.string())
      .nullable()
      .describe('The brands it covers; null: every brand of yours, brands added later included.'),
    critical_only: z.boolean().describe('Only upserts of critical reviews are delivered, and no deletions.'),
    status: z.enum(WEBHOOK_STATUSES).describe('DISABLED: nothing is delivered until the operator enables it again.'),
    disabled_reason: z.string().nullable().describe('Why it is DISABLED; null while ACTIVE.'),
    last_success_at: kstTimestampSchema.nullable().describe('The last delivery answered 2xx (KST); null if none.'),
    failing_since: kstTimestampSchema
      .nullable()
      .describe('The first failed attempt since the last success (KST); null when nothing has failed since.'),
    next_attempt_at: kstTimestampSchema
      .nullable()
      .describe('When the next pending event is due (KST); null when nothing is pending.'),
    lag_seconds: z
      .number()
      .int()
      .describe('Age in seconds of the oldest event not yet delivered; 0 when everything is delivered.'),
  })
  .meta({ id: 'Webhook' });

export const listWebhooksOutput = envelopeOf(pageOf(webhookSchema));
