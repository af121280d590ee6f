import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { kstDayStart } from '../db/kst';
import { webhookEndpoints } from '../db/schema';
import { DEMO_KEYS, DEMO_WEBHOOK } from '../db/seed/demo';
import { createCaller } from '../routers';
import { silentLogger } from '../server/logger';
import { createRequestContext } from '../server/trpc/context';
import type { Services } from '../server/trpc/services';
import { WebhookWorker } from '../server/webhooks/worker';
import { openTestDatabase, transactionsSettled } from './support/database';
import { expectPartnerError } from './support/errors';
import { addReviews, createBrandWithReviews } from './support/factories';
import { testServices } from './support/services';
import { addTestEndpoint } from './support/webhook-delivery';
import { WebhookReceiver } from './support/webhook-receiver';

// The partner's view of its webhooks (D-28): its own endpoints and their attempts, another partner's
// endpoint answering exactly like a missing one.

const KEY = randomBytes(32);
let database: DatabaseHandle;
let services: Services;
let receiver: WebhookReceiver;
let webhookId: string;

const api = (key: string = DEMO_KEYS.active) => createCaller(createRequestContext(services, { apiKey: key }));

beforeAll(async () => {
  database = await openTestDatabase();
  services = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1000000' });
  // The demo's endpoint is not delivered to here: this file's worker sends to its own receiver only.
  await database.db
    .update(webhookEndpoints)
    .set({ status: 'DISABLED', disabledReason: 'disabled by the operator' })
    .where(eq(webhookEndpoints.id, DEMO_WEBHOOK.id));
  receiver = new WebhookReceiver();
  const url = await receiver.start();
  const brand = await createBrandWithReviews(database.db, { critical: [1, 2], platforms: ['BAEMIN'], reviews: [] });
  const added = await addTestEndpoint(database.db, KEY, url, { brandCodes: [brand.brandCode] });
  webhookId = added.id;
  receiver.secrets = [added.secret];
  // Three events, each failing once, then delivered: six attempts.
  let answered = 0;
  receiver.answer = () => (answered++ < 3 ? { status: 500, body: 'down for maintenance' } : { status: 204 });
  const first = kstDayStart('2026-05-01').getTime();
  await addReviews(
    database.db,
    brand,
    [0, 1, 2].map((i) => ({ shop: 0, writtenAt: new Date(first + i * 60_000), content: `review ${i}`, rating: 4 })),
  );
  await transactionsSettled(database);
  let skew = 0;
  const worker = new WebhookWorker({
    db: database.db,
    log: silentLogger,
    secretsKey: KEY,
    allowPrivateTargets: true,
    now: () => new Date(Date.now() + skew),
  });
  await worker.runOnce();
  skew += 5_000;
  await worker.runOnce();
  await worker.stop();
});

afterAll(() => receiver.close());

describe('GET /partner/v1/webhooks', () => {
  it('lists the partner’s endpoints with how their deliveries stand', async () => {
    const { data } = await api().webhooks.list();
    expect(data.items.map((item) => item.webhook_id)).toEqual([DEMO_WEBHOOK.id, webhookId]);
    const [demo, ours] = data.items;
    expect(demo).toMatchObject({
      url: DEMO_WEBHOOK.url,
      brand_codes: ['chicken-house'],
      status: 'DISABLED',
      disabled_reason: 'disabled by the operator',
      last_success_at: null,
      next_attempt_at: null,
      lag_seconds: 0,
    });
    expect(ours).toMatchObject({
      critical_only: false,
      status: 'ACTIVE',
      disabled_reason: null,
      last_success_at: expect.stringMatching(/\+09:00$/),
      failing_since: null,
      next_attempt_at: null,
      lag_seconds: 0,
    });
  });

  it('shows no endpoint of another partner', async () => {
    const { data } = await api(DEMO_KEYS.other).webhooks.list();
    expect(data.items).toEqual([]);
  });
});

describe('GET /partner/v1/webhooks/{webhook_id}/deliveries', () => {
  it('gives the attempts newest first, page by page', async () => {
    const ctx = createRequestContext(services, { apiKey: DEMO_KEYS.active });
    const first = await createCaller(ctx).webhooks.deliveries({ webhook_id: webhookId, limit: 4 });
    expect(first.data).toMatchObject({ limit: 4, has_next: true });
    expect(ctx.responseHeaders.Link).toBe(
      `</partner/v1/webhooks/${webhookId}/deliveries?limit=4&cursor=${first.data.next_cursor}>; rel="next"`,
    );
    const second = await api().webhooks.deliveries({ webhook_id: webhookId, limit: 4, cursor: first.data.next_cursor });
    expect(second.data.has_next).toBe(false);
    const all = [...first.data.items, ...second.data.items];
    expect(all).toHaveLength(6);
    expect(all.map((item) => [item.attempt, item.status_code])).toEqual([
      [2, 204],
      [2, 204],
      [2, 204],
      [1, 500],
      [1, 500],
      [1, 500],
    ]);
    const times = all.map((item) => item.attempted_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all[3]).toMatchObject({
      type: 'review.upserted',
      error: 'HTTP 500: down for maintenance',
      next_attempt_at: expect.stringMatching(/\+09:00$/),
    });
    expect(all[0]?.next_attempt_at).toBeNull();
    expect(new Set(all.map((item) => item.event_id)).size).toBe(3);
  });

  it('answers another partner’s webhook exactly like a missing one: 404 PARTNER_API_NOT_FOUND', async () => {
    await expectPartnerError(
      api(DEMO_KEYS.other).webhooks.deliveries({ webhook_id: webhookId }),
      'PARTNER_API_NOT_FOUND',
    );
    await expectPartnerError(
      api(DEMO_KEYS.other).webhooks.deliveries({ webhook_id: 'wh_000000000000000000000000' }),
      'PARTNER_API_NOT_FOUND',
    );
    await expectPartnerError(
      api().webhooks.deliveries({ webhook_id: 'wh_000000000000000000000000' }),
      'PARTNER_API_NOT_FOUND',
    );
  });

  it('refuses a malformed cursor with 400', async () => {
    await expectPartnerError(
      api().webhooks.deliveries({ webhook_id: webhookId, cursor: 'not-a-cursor' }),
      'PARTNER_API_INVALID_PARAMETER',
    );
  });
});
