import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { kstDayStart } from '../db/kst';
import { partnerEndpoints } from '../db/queries/webhooks';
import { brands, webhookDeliveries, webhookEndpoints } from '../db/schema';
import { DEMO_WEBHOOK } from '../db/seed/demo';
import { silentLogger } from '../server/logger';
import { WebhookWorker } from '../server/webhooks/worker';
import { DRIVER, openTestDatabase, transactionsSettled } from './support/database';
import { addReviews, createBrandWithReviews } from './support/factories';
import { addTestEndpoint } from './support/webhook-delivery';
import { WebhookReceiver } from './support/webhook-receiver';

// D-28: the events' table keeps every event delivered in the last 30 days, so the statements over it reach
// it through its indexes in any plan PostgreSQL keeps for them. After five runs of a prepared statement,
// PostgreSQL may keep one generic plan, planned without the values, for the connection's life; a partial
// index whose predicate is compared with a bound value is of no use to that plan, which then reads the
// whole table on every claim. Each prepared statement is checked in its generic plan.

const KEY = randomBytes(32);
let database: DatabaseHandle & { url?: string };
/** One connection planning every statement generically: the plans a long-lived connection may settle on. */
let generic: DatabaseHandle | undefined;
let receiver: WebhookReceiver;
let url: string;

describe.skipIf(DRIVER !== 'postgres')('the statements over webhook events (D-28)', () => {
  beforeAll(async () => {
    database = await openTestDatabase();
    receiver = new WebhookReceiver();
    url = await receiver.start();
  });

  afterAll(async () => {
    await generic?.close();
    await receiver.close();
  });

  it('reach the events through an index in their generic plans, never by reading the whole table', async () => {
    generic = await openDatabase({ url: database.url as string, maxConnections: 1 });
    const db = generic.db;
    await db.execute(sql`SET plan_cache_mode = force_generic_plan`);
    await db.update(webhookEndpoints).set({ status: 'DISABLED' }).where(eq(webhookEndpoints.id, DEMO_WEBHOOK.id));
    const brand = await createBrandWithReviews(db, { critical: [1, 2], platforms: ['BAEMIN'], reviews: [] });
    const added = await addTestEndpoint(db, KEY, url, { brandCodes: [brand.brandCode] });
    receiver.secrets = [added.secret];
    // Days of delivered events, as the table holds in service (bodies of about a kilobyte).
    await db.insert(webhookDeliveries).values(
      Array.from({ length: 3_000 }, (_, i) => ({
        id: `msg_old${i}`,
        endpointId: added.id,
        brandId: brand.brandId,
        reviewCode: `old${i}`,
        type: 'review.upserted',
        body: JSON.stringify({ type: 'review.upserted', data: { content: 'x'.repeat(900) } }),
        status: 'DELIVERED' as const,
        deliveredAt: new Date(),
      })),
    );
    const first = kstDayStart('2026-05-01').getTime();
    await addReviews(
      db,
      brand,
      [0, 1, 2].map((i) => ({ shop: 0, writtenAt: new Date(first + i * 60_000), content: `review ${i}`, rating: 3 })),
    );
    await transactionsSettled(generic);
    // One attempt fails: the retry's statements run too.
    let answered = 0;
    receiver.answer = () => (answered++ === 0 ? { status: 503 } : { status: 204 });
    const worker = new WebhookWorker({ db, log: silentLogger, secretsKey: KEY, allowPrivateTargets: true });
    await worker.runOnce();
    await worker.stop();
    expect(receiver.received).toHaveLength(2);
    const [owner] = await db.select({ partnerId: brands.partnerId }).from(brands).where(eq(brands.id, brand.brandId));
    await partnerEndpoints(db, owner?.partnerId ?? 0, { limit: 20, offset: 0 });

    const statements = await generic.rows<{ name: string; statement: string; types: string[] }>(
      sql`SELECT name, statement, parameter_types::text[] AS types FROM pg_prepared_statements
        WHERE statement LIKE '%"webhook_deliveries"%'`,
    );
    // Those prepared by name (the claim, the record, the events made); the rest are planned on each run.
    expect(statements.length).toBeGreaterThanOrEqual(3);
    const wholeTable: string[] = [];
    for (const { name, statement, types } of statements) {
      const values = types.map((type) => `NULL::${type}`).join(', ');
      const plan = await generic.rows<{ 'QUERY PLAN': string }>(
        sql.raw(`EXPLAIN EXECUTE "${name}"${values ? `(${values})` : ''}`),
      );
      const text = plan.map((line) => line['QUERY PLAN']).join('\n');
      if (/Seq Scan on webhook_deliveries/.test(text)) wholeTable.push(`${statement}\n${text}`);
    }
    expect(wholeTable).toEqual([]);
  });

  it('are planned on the worker’s connections for the table as it is on each run, never by a kept plan', async () => {
    // A plan kept from when the table held a few rows would read it whole for as long as the connection lives.
    const handle = await openDatabase({ url: database.url as string, maxConnections: 1 });
    try {
      const [row] = (await handle.control.execute(sql`SHOW plan_cache_mode`)) as unknown as {
        plan_cache_mode: string;
      }[];
      expect(row?.plan_cache_mode).toBe('force_custom_plan');
    } finally {
      await handle.close();
    }
  });
});
