import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { and, eq, ne, sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type DatabaseHandle, listenerOf, openDatabase } from '../db/client';
import { kstDayStart } from '../db/kst';
import { claimDeliveries, type NewDelivery, recordEvents } from '../db/queries/webhook-deliveries';
import { positionsOf } from '../db/queries/webhooks';
import {
  brands,
  partners,
  reviews,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
  webhookPositions,
} from '../db/schema';
import { DEMO_KEYS, DEMO_WEBHOOK } from '../db/seed/demo';
import { createCaller } from '../routers';
import { openFeedCursor } from '../routers/reviews/feed-cursor';
import { silentLogger } from '../server/logger';
import { createRequestContext } from '../server/trpc/context';
import type { Services } from '../server/trpc/services';
import { enableEndpoint, endpointNamed, rotateSecret } from '../server/webhooks/admin';
import { DeliveryPace } from '../server/webhooks/pace';
import { RETRY_SCHEDULE_MS, WebhookWorker } from '../server/webhooks/worker';
import { DRIVER, openTestDatabase, transactionsSettled } from './support/database';
import { type BrandFixture, createBrandWithReviews } from './support/factories';
import { testServices } from './support/services';
import { addTestEndpoint, queueTest } from './support/webhook-delivery';
import { applied, type Review, WebhookReceiver } from './support/webhook-receiver';

// Webhook delivery (D-28) against a real receiver verifying every signature: at least once, in order per
// review, retried on the specification's schedule, leases rather than transactions across an attempt.

const KEY = randomBytes(32);
const FIRST = kstDayStart('2026-05-01').getTime();
const MINUTE = 60_000;

let database: DatabaseHandle & { url?: string };
let services: Services;
let receiver: WebhookReceiver;
let url: string;
/** How far the clock deliveries are scheduled by runs ahead of the real one: tests move it instead of waiting. */
let skew = 0;
const clockNow = () => Date.now() + skew;
const workers: WebhookWorker[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
  services = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1000000' });
  // The demo's endpoint would be read from the seed's first change: this file's workers deliver its own only.
  await database.db
    .update(webhookEndpoints)
    .set({ status: 'DISABLED' })
    .where(eq(webhookEndpoints.id, DEMO_WEBHOOK.id));
  receiver = new WebhookReceiver();
  url = await receiver.start();
});

afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await receiver.close();
});

// Each test answers in its own way and counts its own deliveries.
beforeEach(() => {
  receiver.received.length = 0;
  receiver.requests.length = 0;
  receiver.maxInFlightPerReview = 0;
  receiver.answer = () => ({ status: 204 });
  receiver.resetKeptConnections = false;
});

function worker(options: Partial<ConstructorParameters<typeof WebhookWorker>[0]> = {}) {
  const made = new WebhookWorker({
    db: database.db,
    log: silentLogger,
    secretsKey: KEY,
    allowPrivateTargets: true,
    now: () => new Date(clockNow()),
    ...options,
  });
  workers.push(made);
  return made;
}

type Fixture = BrandFixture & { webhookId: string; secret: string; shopId: number; partnerId: number };

async function newEndpoint(request: { criticalOnly?: boolean; url?: string } = {}): Promise<Fixture> {
  const brand = await createBrandWithReviews(database.db, { critical: [1, 2], platforms: ['BAEMIN'], reviews: [] });
  const added = await addTestEndpoint(database.db, KEY, request.url ?? url, {
    brandCodes: [brand.brandCode],
    criticalOnly: request.criticalOnly ?? false,
  });
  receiver.secrets = [added.secret];
  const [row] = await database.db
    .select({ partnerId: brands.partnerId })
    .from(brands)
    .where(eq(brands.id, brand.brandId));
  return {
    ...brand,
    webhookId: added.id,
    secret: added.secret,
    shopId: brand.shops[0]?.id ?? 0,
    partnerId: row?.partnerId ?? 0,
  };
}

let written = 0;
async function writeReview(fixture: Fixture, rating = 5, db = database.db) {
  const code = `W${randomBytes(5).toString('hex')}`;
  written++;
  await db.insert(reviews).values({
    reviewCode: code,
    brandId: fixture.brandId,
    shopId: fixture.shopId,
    writtenAt: new Date(FIRST + written * MINUTE),
    content: `review ${written}`,
    rating,
  });
  return code;
}

/** Inserts, updates, deletes, and a transaction writing one review twice. */
async function writerMix(fixture: Fixture) {
  const codes: string[] = [];
  for (let i = 0; i < 12; i++) codes.push(await writeReview(fixture, (i % 5) + 1));
  const [a, b, c, d] = codes as [string, string, string, string];
  await database.db.update(reviews).set({ content: 'edited' }).where(eq(reviews.reviewCode, a));
  await database.db.delete(reviews).where(eq(reviews.reviewCode, b));
  await database.db.transaction(async (tx) => {
    await tx.update(reviews).set({ content: 'first' }).where(eq(reviews.reviewCode, c));
    await tx.update(reviews).set({ content: 'second', rating: 1 }).where(eq(reviews.reviewCode, c));
  });
  await database.db.update(reviews).set({ content: 'again' }).where(eq(reviews.reviewCode, a));
  await database.db.delete(reviews).where(eq(reviews.reviewCode, d));
  await writeReview(fixture, 2);
  await transactionsSettled(database);
}

async function listed(brandCode: string): Promise<Map<string, Review>> {
  const api = createCaller(createRequestContext(services, { apiKey: DEMO_KEYS.active }));
  const all = new Map<string, Review>();
  for (let page = 1; ; page++) {
    const { data } = await api.reviews.list({ brand_code: brandCode, page, limit: 100 });
    for (const item of data.items) all.set(item.review_id, item as Review);
    if (!data.has_next) return all;
  }
}

const pendingOf = (webhookId: string) =>
  database.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, webhookId), eq(webhookDeliveries.status, 'PENDING')));

describe('events applied to a copy give the brand’s list', () => {
  it('after a writer mix: each event verified, in order per review, never two of a review in flight', async () => {
    const fixture = await newEndpoint();
    receiver.answer = async () => {
      await delay(1);
      return { status: 204 };
    };
    await writerMix(fixture);
    await worker({ concurrency: 8 }).runOnce();
    expect(await pendingOf(fixture.webhookId)).toEqual([]);
    expect(receiver.unverified).toEqual([]);
    expect(applied(receiver.received)).toEqual(await listed(fixture.brandCode));
    expect(receiver.maxInFlightPerReview).toBe(1);
    // Each review's events arrive in the feed's order: their cursors only move forward.
    const key = await services.feedCursorKey();
    const scope = { brandCode: fixture.brandCode, partnerId: fixture.partnerId };
    const last = new Map<string, number>();
    for (const { event } of receiver.received) {
      const position = openFeedCursor(key, event.data.cursor as string, scope);
      if (!position || position === 'expired' || position.kind !== 'changes') throw new Error('a changes cursor');
      const at = position.xid * 1e6 + position.seq;
      expect(at).toBeGreaterThan(last.get(event.data.review_id as string) ?? -1);
      last.set(event.data.review_id as string, at);
      expect(event.timestamp).toMatch(/\+09:00$/);
    }
  });

  it('a review’s later event waits while an earlier one is pending, then follows it', async () => {
    const fixture = await newEndpoint();
    const running = worker();
    receiver.answer = () => ({ status: 503 });
    const code = await writeReview(fixture);
    await transactionsSettled(database);
    await running.runOnce();
    await database.db.update(reviews).set({ content: 'later' }).where(eq(reviews.reviewCode, code));
    await transactionsSettled(database);
    await running.runOnce();
    // The second event is due, but the first of the same review is still pending.
    expect(receiver.requests).toHaveLength(1);
    expect(await pendingOf(fixture.webhookId)).toHaveLength(2);
    receiver.answer = () => ({ status: 204 });
    skew += RETRY_SCHEDULE_MS[1] as number;
    await running.runOnce();
    expect(receiver.received.map((item) => (item.event.data.review as { content: string }).content)).toEqual([
      expect.stringMatching(/^review /),
      'later',
    ]);
  });

  it('the event’s cursor continues the feed from right after it', async () => {
    const fixture = await newEndpoint();
    await writeReview(fixture);
    await transactionsSettled(database);
    await worker().runOnce();
    const [event] = receiver.received;
    const api = createCaller(createRequestContext(services, { apiKey: DEMO_KEYS.active }));
    const { data } = await api.reviews.changes({
      brand_code: fixture.brandCode,
      cursor: event?.event.data.cursor as string,
    });
    expect(data.items).toEqual([]);
  });

  it('a critical-only endpoint gets upserts of critical reviews and no deletions', async () => {
    const fixture = await newEndpoint({ criticalOnly: true });
    const critical = await writeReview(fixture, 1);
    const fine = await writeReview(fixture, 5);
    await database.db.delete(reviews).where(eq(reviews.reviewCode, fine));
    await transactionsSettled(database);
    await worker().runOnce();
    expect(receiver.received.map((item) => [item.event.type, item.event.data.review_id])).toEqual([
      ['review.upserted', critical],
    ]);
  });

  it('a position the feed cannot continue gives one feed.expired, then events from now', async () => {
    const fixture = await newEndpoint();
    await writeReview(fixture);
    await database.db.update(brands).set({ criticalStarMax: 3 }).where(eq(brands.id, fixture.brandId));
    await transactionsSettled(database);
    const running = worker();
    await running.runOnce();
    expect(receiver.received.map((item) => item.event)).toEqual([
      expect.objectContaining({ type: 'feed.expired', data: { brand_code: fixture.brandCode } }),
    ]);
    const after = await writeReview(fixture);
    await transactionsSettled(database);
    await running.runOnce();
    expect(receiver.received.map((item) => item.event.data.review_id)).toEqual([undefined, after]);
  });
});

describe('retries', () => {
  it('a receiver down for a while and back gets everything, same webhook-id, honouring Retry-After', async () => {
    const fixture = await newEndpoint();
    const running = worker();
    receiver.answer = () => ({ status: 503 });
    await writeReview(fixture);
    await writeReview(fixture);
    await transactionsSettled(database);
    await running.runOnce();
    expect(receiver.requests).toHaveLength(2);
    // The schedule: 5 s after the first failure, then 5 min.
    skew += RETRY_SCHEDULE_MS[1] as number;
    await running.runOnce();
    expect(receiver.requests).toHaveLength(4);
    receiver.answer = () => ({ status: 429, headers: { 'Retry-After': '3600' } });
    skew += RETRY_SCHEDULE_MS[2] as number;
    await running.runOnce();
    expect(receiver.requests).toHaveLength(6);
    // The schedule says 30 min; the receiver asked for an hour.
    receiver.answer = () => ({ status: 204 });
    skew += RETRY_SCHEDULE_MS[3] as number;
    await running.runOnce();
    expect(receiver.requests).toHaveLength(6);
    skew += 30 * MINUTE;
    await running.runOnce();
    expect(receiver.received).toHaveLength(2);
    const ids = new Set(receiver.requests.map((item) => item.id));
    expect(ids.size).toBe(2);
    expect(new Set(receiver.received.map((item) => item.id))).toEqual(ids);
    const attempts = await database.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.endpointId, fixture.webhookId));
    expect(attempts.map((row) => row.statusCode).sort()).toEqual([204, 204, 429, 429, 503, 503, 503, 503]);
  });

  it('a batch answered differently is recorded event by event: the delivered one done, the other due on the schedule', async () => {
    const fixture = await newEndpoint();
    const running = worker();
    const [kept] = [await writeReview(fixture), await writeReview(fixture)];
    await transactionsSettled(database);
    receiver.answer = ({ event }) => ({ status: event.data.review_id === kept ? 204 : 503 });
    await running.runOnce();
    expect(receiver.requests).toHaveLength(2);
    const rows = await database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, fixture.webhookId));
    const delivered = rows.find((row) => row.reviewCode === kept);
    const pending = rows.find((row) => row.reviewCode !== kept);
    expect(delivered).toMatchObject({ status: 'DELIVERED', attempts: 1, leaseOwner: null });
    expect(delivered?.deliveredAt).toBeInstanceOf(Date);
    expect(pending).toMatchObject({ status: 'PENDING', attempts: 1, leaseOwner: null, deliveredAt: null });
    const attempts = await database.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.endpointId, fixture.webhookId));
    const failed = attempts.find((row) => row.deliveryId === pending?.id);
    expect(failed).toMatchObject({ statusCode: 503, attempt: 1 });
    // Due again on the schedule's second step, counted from the attempt.
    expect((pending?.nextAttemptAt.getTime() ?? 0) - (failed?.attemptedAt.getTime() ?? 0)).toBe(RETRY_SCHEDULE_MS[1]);
    expect(attempts.find((row) => row.deliveryId === delivered?.id)).toMatchObject({ statusCode: 204, error: null });
  });

  it('an answer with a NUL byte is kept as the attempt’s error, the NUL shown as U+FFFD (text cannot hold it)', async () => {
    const fixture = await newEndpoint();
    receiver.answer = () => ({ status: 500, body: 'bad\u0000answer' });
    await writeReview(fixture);
    await transactionsSettled(database);
    await worker().runOnce();
    const attempts = await database.db
      .select({ error: webhookAttempts.error, attempt: webhookAttempts.attempt })
      .from(webhookAttempts)
      .where(eq(webhookAttempts.endpointId, fixture.webhookId));
    expect(attempts).toEqual([{ error: 'HTTP 500: bad\uFFFDanswer', attempt: 1 }]);
  });

  it('the schedule run out disables the endpoint; enable resumes with nothing lost', async () => {
    const fixture = await newEndpoint();
    const running = worker();
    receiver.answer = () => ({ status: 500, body: 'x'.repeat(5000) });
    await writeReview(fixture);
    await transactionsSettled(database);
    for (const wait of RETRY_SCHEDULE_MS) {
      skew += wait;
      await running.runOnce();
    }
    expect(receiver.requests).toHaveLength(RETRY_SCHEDULE_MS.length);
    expect(await endpointNamed(database.db, fixture.webhookId)).toMatchObject({
      status: 'DISABLED',
      disabledReason: expect.stringMatching(/10 tries/),
    });
    const errors = await database.db
      .select({ error: webhookAttempts.error })
      .from(webhookAttempts)
      .where(eq(webhookAttempts.endpointId, fixture.webhookId));
    for (const { error } of errors) expect(Buffer.byteLength(error ?? '')).toBeLessThanOrEqual(1024);
    receiver.answer = () => ({ status: 204 });
    await enableEndpoint(database.db, await endpointNamed(database.db, fixture.webhookId), false);
    await running.runOnce();
    expect(applied(receiver.received)).toEqual(await listed(fixture.brandCode));
  });

  it('a receiver’s 410 disables its endpoint; enable resumes without a gap', async () => {
    const fixture = await newEndpoint();
    const running = worker();
    receiver.answer = () => ({ status: 410 });
    await writeReview(fixture);
    await transactionsSettled(database);
    await running.runOnce();
    expect(await endpointNamed(database.db, fixture.webhookId)).toMatchObject({
      status: 'DISABLED',
      disabledReason: 'the receiver answered 410 Gone',
    });
    // Written while disabled: read once the endpoint is enabled again.
    await writeReview(fixture);
    await transactionsSettled(database);
    await running.runOnce();
    expect(receiver.requests).toHaveLength(1);
    receiver.answer = () => ({ status: 204 });
    await enableEndpoint(database.db, await endpointNamed(database.db, fixture.webhookId), false);
    await running.runOnce();
    expect(receiver.received).toHaveLength(2);
    expect(applied(receiver.received)).toEqual(await listed(fixture.brandCode));
  });
});

describe('leases, not transactions, across an attempt', () => {
  it('two instances that read the same page: the one that moves the position makes the events, the other none', async () => {
    const fixture = await newEndpoint();
    const at = { endpointId: fixture.webhookId, brandId: fixture.brandId };
    const event = (id: string): NewDelivery => ({
      ...at,
      id,
      reviewCode: 'R-race',
      type: 'review.upserted',
      body: '{}',
    });
    const ids = async () =>
      (
        await database.db
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(eq(webhookDeliveries.endpointId, fixture.webhookId))
      ).map((row) => row.id);
    const from = (await positionsOf(database.db, fixture.webhookId)).get(fixture.brandId);
    if (!from) throw new Error('an endpoint starts with a position in its brand');
    const to = { ...from, seq: from.seq + 1 };
    expect(await recordEvents(database.db, { ...at, from, to }, [event('msg_race_first')])).toBe(true);
    expect(await recordEvents(database.db, { ...at, from, to }, [event('msg_race_second')])).toBe(false);
    expect(await ids()).toEqual(['msg_race_first']);
    // A brand the endpoint had no position in (added to its partner later): created once.
    await database.db.delete(webhookPositions).where(eq(webhookPositions.endpointId, fixture.webhookId));
    expect(await recordEvents(database.db, { ...at, from: undefined, to }, [event('msg_race_third')])).toBe(true);
    expect(await recordEvents(database.db, { ...at, from: undefined, to }, [event('msg_race_fourth')])).toBe(false);
    expect((await ids()).sort()).toEqual(['msg_race_first', 'msg_race_third']);
    expect((await positionsOf(database.db, fixture.webhookId)).get(fixture.brandId)).toEqual(to);
  });

  it('an instance gone mid-delivery: after its lease, another sends the event again with its webhook-id; no transaction stays open meanwhile', async () => {
    const fixture = await newEndpoint();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.answer = async () => {
      if (receiver.requests.length === 1) await held;
      return { status: 204 };
    };
    await writeReview(fixture);
    await transactionsSettled(database);
    const gone = worker({ leaseMs: MINUTE });
    const first = gone.runOnce();
    await receiver.waitForRequests(1);
    // The attempt waits on the receiver: no session waits inside a transaction, so the database answers at
    // once. (A statement running right now, say another test's worker woken by a change, is not one.)
    if (DRIVER === 'postgres') {
      const open = await database.rows<{ pid: number }>(
        sql`SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`,
      );
      expect(open).toEqual([]);
    }
    expect(await database.rows(sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
    const other = worker({ leaseMs: MINUTE });
    await other.runOnce();
    expect(receiver.requests).toHaveLength(1);
    skew += MINUTE + 1;
    await other.runOnce();
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1]?.id).toBe(receiver.requests[0]?.id);
    release();
    await first;
    expect(await pendingOf(fixture.webhookId)).toEqual([]);
    const attempts = await database.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.endpointId, fixture.webhookId));
    // The instance whose lease ran out records nothing: the event is the other's now.
    expect(attempts).toHaveLength(1);
  });

  it('a batch that waited out its lease for the pace is left to the instance that took it meanwhile: sent once', async () => {
    const fixture = await newEndpoint();
    for (let i = 0; i < 2; i++) await writeReview(fixture);
    await transactionsSettled(database);
    // The pace lets the first batch go at once and holds the next one for an hour, until the test lets it go.
    let asked = () => {};
    const waiting = new Promise<void>((resolve) => {
      asked = resolve;
    });
    let go = () => {};
    const pace = new DeliveryPace(
      1 / 3_600,
      () => 0,
      () => {
        asked();
        return new Promise<void>((resolve) => {
          go = resolve;
        });
      },
    );
    const paced = worker({ leaseMs: MINUTE, concurrency: 1, pace });
    const passing = paced.runOnce();
    await waiting;
    expect(receiver.requests).toHaveLength(1);
    // Its claim on the second event ran out while it waited: another instance takes the event and sends it.
    skew += MINUTE + 1;
    await worker({ leaseMs: MINUTE }).runOnce();
    expect(receiver.requests).toHaveLength(2);
    go();
    await passing;
    expect(receiver.requests).toHaveLength(2);
    expect(new Set(receiver.ids()).size).toBe(2);
    expect(await pendingOf(fixture.webhookId)).toEqual([]);
  });

  it('an event claimed by an instance that died is delivered once its lease has run out', async () => {
    const fixture = await newEndpoint();
    receiver.answer = () => ({ status: 204 });
    const id = await queueTest(database.db, await endpointNamed(database.db, fixture.webhookId));
    const now = new Date(clockNow());
    const claimed = await claimDeliveries(database.db, {
      endpointId: fixture.webhookId,
      partnerId: fixture.partnerId,
      owner: 'died',
      now,
      until: new Date(clockNow() + MINUTE),
      limit: 10,
    });
    expect(claimed.map((row) => row.id)).toEqual([id]);
    const running = worker();
    await running.runOnce();
    expect(receiver.requests).toHaveLength(0);
    skew += MINUTE + 1;
    await running.runOnce();
    expect(receiver.received.map((item) => [item.id, item.event])).toEqual([
      [id, expect.objectContaining({ type: 'webhook.test', data: { webhook_id: fixture.webhookId } })],
    ]);
  });
});

describe('connections to a receiver', () => {
  it('a burst shares kept connections: no more of them than attempts at once', async () => {
    const fixture = await newEndpoint();
    for (let i = 0; i < 20; i++) await writeReview(fixture);
    await transactionsSettled(database);
    const before = receiver.connections;
    const running = worker({ concurrency: 4 });
    await running.runOnce();
    expect(receiver.received).toHaveLength(20);
    expect(receiver.connections - before).toBeLessThanOrEqual(4);
    await running.stop();
  });

  it('a kept connection the receiver reset as idle: the event goes again on a new one, no attempt failed', async () => {
    const fixture = await newEndpoint();
    const running = worker();
    await writeReview(fixture);
    await transactionsSettled(database);
    await running.runOnce();
    receiver.resetKeptConnections = true;
    const before = receiver.connections;
    await writeReview(fixture);
    await transactionsSettled(database);
    await running.runOnce();
    expect(receiver.received).toHaveLength(2);
    expect(receiver.connections - before).toBe(1);
    const attempts = await database.db
      .select({ statusCode: webhookAttempts.statusCode })
      .from(webhookAttempts)
      .where(eq(webhookAttempts.endpointId, fixture.webhookId));
    expect(attempts).toEqual([{ statusCode: 204 }, { statusCode: 204 }]);
    await running.stop();
  });
});

describe('pauses and stops', () => {
  it('a drained instance cuts its attempt short and gives the event back at once', async () => {
    const fixture = await newEndpoint();
    receiver.answer = () => new Promise<never>(() => undefined);
    await queueTest(database.db, await endpointNamed(database.db, fixture.webhookId));
    const draining = worker({ leaseMs: 60 * MINUTE });
    const pass = draining.runOnce();
    await receiver.waitForRequests(1);
    await draining.stop();
    await pass;
    const [pending] = await pendingOf(fixture.webhookId);
    expect(pending).toMatchObject({ leaseOwner: null, leaseUntil: null, attempts: 0 });
    receiver.answer = () => ({ status: 204 });
    await worker().runOnce();
    expect(receiver.received.map((item) => item.id)).toEqual([pending?.id]);
  });

  it('a deactivated partner’s endpoints pause until it is activated', async () => {
    const fixture = await newEndpoint();
    await writeReview(fixture);
    await transactionsSettled(database);
    const running = worker();
    await database.db.update(partners).set({ isActive: false }).where(eq(partners.id, fixture.partnerId));
    try {
      await running.runOnce();
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await database.db.update(partners).set({ isActive: true }).where(eq(partners.id, fixture.partnerId));
    }
    await running.runOnce();
    expect(receiver.received).toHaveLength(1);
  });

  it('a brand moved to another partner stops delivering to the old one', async () => {
    const fixture = await newEndpoint();
    const running = worker();
    receiver.answer = () => ({ status: 503 });
    await writeReview(fixture);
    await transactionsSettled(database);
    await running.runOnce();
    const [other] = await database.db.select({ id: partners.id }).from(partners).where(eq(partners.name, 'Other Eats'));
    await database.db
      .update(brands)
      .set({ partnerId: other?.id ?? 0 })
      .where(eq(brands.id, fixture.brandId));
    await writeReview(fixture);
    await transactionsSettled(database);
    receiver.answer = () => ({ status: 204 });
    skew += RETRY_SCHEDULE_MS[1] as number;
    await running.runOnce();
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.received).toHaveLength(0);
    // Nothing of the brand stays with the endpoint: no event waiting (no lag), no position.
    expect(await pendingOf(fixture.webhookId)).toEqual([]);
    expect(await positionsOf(database.db, fixture.webhookId)).toEqual(new Map());
  });
});

describe('safe by default', () => {
  it('a private target is refused at each attempt without the allowance, and the attempt says why', async () => {
    const fixture = await newEndpoint();
    await writeReview(fixture);
    await transactionsSettled(database);
    await worker({ allowPrivateTargets: false }).runOnce();
    expect(receiver.requests).toHaveLength(0);
    const [attempt] = await database.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.endpointId, fixture.webhookId));
    expect(attempt).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/^target refused: webhooks are delivered over https only/),
    });
  });

  it('during a rotation’s overlap both secrets sign; after it, the new one alone', async () => {
    const fixture = await newEndpoint();
    const endpoint = await endpointNamed(database.db, fixture.webhookId);
    const rotated = await rotateSecret(database.db, KEY, endpoint, new Date(clockNow()));
    receiver.secrets = [fixture.secret, rotated.secret];
    const running = worker();
    await queueTest(database.db, endpoint);
    await running.runOnce();
    expect(receiver.received.map((item) => item.verifiedBy)).toEqual([[fixture.secret, rotated.secret]]);
    skew += 24 * 60 * MINUTE + 1;
    await queueTest(database.db, endpoint);
    await running.runOnce();
    expect(receiver.received.map((item) => item.verifiedBy)).toEqual([
      [fixture.secret, rotated.secret],
      [rotated.secret],
    ]);
  });
});

describe('waking on a change', () => {
  it('a committed change is delivered at once, with the poll an hour away', async () => {
    const fixture = await newEndpoint();
    // Nothing else is pending, so no retry coming due can start a pass: only the notice can.
    await database.db
      .update(webhookEndpoints)
      .set({ status: 'DISABLED' })
      .where(ne(webhookEndpoints.id, fixture.webhookId));
    const first = await writeReview(fixture);
    const running = worker({ listen: listenerOf(database.db), pollMs: 3_600_000 });
    try {
      await running.start();
      // The start's own pass delivers what was there; what is written after it needs the notice.
      await receiver.waitForRequests(1);
      const second = await writeReview(fixture);
      await receiver.waitForRequests(2);
      expect(receiver.received.map((item) => item.event.data.review_id)).toEqual([first, second]);
    } finally {
      await running.stop();
    }
  });

  it.runIf(DRIVER === 'postgres')(
    'a change committed before the listen, held back by an older transaction, is delivered once that one ends',
    async () => {
      const fixture = await newEndpoint();
      await database.db
        .update(webhookEndpoints)
        .set({ status: 'DISABLED' })
        .where(ne(webhookEndpoints.id, fixture.webhookId));
      const holder = await openDatabase({ url: database.url ?? '', maxConnections: 1 });
      let release = () => {};
      let began = () => {};
      const begun = new Promise<void>((resolve) => {
        began = resolve;
      });
      const held = holder.db.transaction(async (tx) => {
        await tx.execute(sql`SELECT pg_current_xact_id()`);
        began();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      const running = worker({ listen: listenerOf(database.db), pollMs: 3_600_000 });
      // Each pass as it begins: the wait below is for the second one, an event rather than a poll.
      const started: Promise<void>[] = [];
      let passBegan: () => void = () => {};
      const runOnce = running.runOnce.bind(running);
      vi.spyOn(running, 'runOnce').mockImplementation(() => {
        const pass = runOnce();
        started.push(pass);
        passBegan();
        return pass;
      });
      const passesBegun = async (count: number) => {
        while (started.length < count)
          await new Promise<void>((resolve) => {
            passBegan = resolve;
          });
      };
      try {
        await begun;
        const code = await writeReview(fixture);
        await running.start();
        // The start's pass and the listen's both ran while the change was held back: no notice will come.
        await passesBegun(2);
        await Promise.all(started.slice(0, 2));
        expect(receiver.requests).toHaveLength(0);
        release();
        await held;
        await receiver.waitForRequests(1);
        expect(receiver.received.map((item) => item.event.data.review_id)).toEqual([code]);
      } finally {
        release();
        await running.stop();
        await holder.close();
      }
    },
  );
});

describe.runIf(DRIVER === 'postgres')('two instances on one PostgreSQL', () => {
  it('deliver each event once when nothing fails', async () => {
    const fixture = await newEndpoint();
    const second = await openDatabase({ url: database.url ?? '', maxConnections: 4 });
    try {
      receiver.answer = async () => {
        await delay(1);
        return { status: 204 };
      };
      for (let i = 0; i < 30; i++) await writeReview(fixture);
      await transactionsSettled(database);
      const one = worker();
      const two = worker({ db: second.db });
      await Promise.all([one.runOnce(), two.runOnce(), one.runOnce(), two.runOnce()]);
      await Promise.all([one.runOnce(), two.runOnce()]);
      expect(receiver.requests).toHaveLength(30);
      expect(new Set(receiver.requests.map((item) => item.id)).size).toBe(30);
      expect(applied(receiver.received)).toEqual(await listed(fixture.brandCode));
    } finally {
      for (const made of workers.splice(0)) await made.stop();
      await second.close();
    }
  });
});
