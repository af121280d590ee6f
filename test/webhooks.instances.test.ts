import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { currentChangesPosition, loadFeedCursorKey } from '../db/queries/review-changes';
import { brands, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../db/schema';
import { DEMO_KEYS, DEMO_WEBHOOK } from '../db/seed/demo';
import { openFeedCursor } from '../routers/reviews/feed-cursor';
import { DRIVER, openTestDatabase, transactionsSettled } from './support/database';
import { eventually } from './support/eventually';
import { createBrandWithReviews } from './support/factories';
import { type LoggedProcess, spawnLogged } from './support/server-process';
import { addTestEndpoint } from './support/webhook-delivery';
import { applied, type Received, type Review, WebhookReceiver } from './support/webhook-receiver';

// D-28 across real instances: server processes (the built `node dist/server/main.js`) on one PostgreSQL
// deliver to a receiver in this process that verifies every signature. With nothing failing, each event
// arrives once, in order per review, and the events rebuild the brand's review list. An instance killed
// while the receiver holds its attempt open loses nothing: once its lease runs out, another instance sends
// the event again with the same webhook-id.

const ROOT = path.resolve(import.meta.dirname, '..');
const KEY = randomBytes(32);
/** The lease of the instances one of which is killed: seconds to wait out, not the default minute. */
const LEASE_MS = 5_000;
const FIRST = Date.UTC(2026, 4, 1);

type Instance = LoggedProcess & { base: string; metrics: string };

let database: DatabaseHandle & { url?: string };
/** The writer: its own postgres.js connection, as the platform's importers write. */
let writer: postgres.Sql;
let receiver: WebhookReceiver;
let url: string;
let cursorKey: Buffer;
const instances: Instance[] = [];

/** An API server process on the test's database, delivering webhooks like any instance. */
async function startInstance(env: Record<string, string> = {}): Promise<Instance> {
  const started = spawnLogged(process.execPath, ['dist/server/main.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '1000000',
      DATABASE_URL: database.url,
      WEBHOOK_SECRETS_KEY: KEY.toString('base64'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const instance = { ...started, base: '', metrics: '' };
  instances.push(instance);
  const listening = (await started.logged('listening')) as { base: string; metrics: { port: number } };
  instance.base = listening.base;
  instance.metrics = `http://127.0.0.1:${listening.metrics.port}/metrics`;
  return instance;
}

/** A metric's value as an instance serves it (its delivery thread reports to the process that serves them). */
async function metric(instance: Instance, series: string): Promise<number> {
  const text = await (await fetch(instance.metrics)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return Number(line?.slice(series.length + 1) ?? 0);
}

const running = (instance: Instance) => instance.child.exitCode === null && instance.child.signalCode === null;

async function stopInstances() {
  const stopping = instances.splice(0).filter(running);
  for (const instance of stopping) instance.child.kill('SIGTERM');
  await Promise.all(stopping.map((instance) => instance.exited));
}

type Fixture = { brandId: number; brandCode: string; shopId: number; partnerId: number; webhookId: string };

/** A fresh brand of Demo Foods and an endpoint of the receiver for it alone. */
async function newEndpoint(): Promise<Fixture> {
  const brand = await createBrandWithReviews(database.db, { critical: [1, 2], platforms: ['BAEMIN'], reviews: [] });
  const added = await addTestEndpoint(database.db, KEY, url, { brandCodes: [brand.brandCode] });
  receiver.secrets.push(added.secret);
  const [row] = await database.db
    .select({ partnerId: brands.partnerId })
    .from(brands)
    .where(eq(brands.id, brand.brandId));
  return {
    brandId: brand.brandId,
    brandCode: brand.brandCode,
    shopId: brand.shops[0]?.id ?? 0,
    partnerId: row?.partnerId ?? 0,
    webhookId: added.id,
  };
}

let written = 0;
async function insertReview(fixture: Fixture, rating: number, sql: postgres.Sql = writer) {
  const code = `I${randomBytes(5).toString('hex')}`;
  written++;
  await sql`INSERT INTO reviews (review_code, brand_id, shop_id, written_at, content, rating)
            VALUES (${code}, ${fixture.brandId}, ${fixture.shopId}, ${new Date(FIRST + written * 60_000)},
                    ${`review ${written}`}, ${rating})`;
  return code;
}

/** Inserts, updates, deletes, and a transaction writing one review twice, each committed by the writer. */
async function writerMix(fixture: Fixture) {
  const codes: string[] = [];
  for (let i = 0; i < 12; i++) codes.push(await insertReview(fixture, (i % 5) + 1));
  const [a, b, c, d] = codes as [string, string, string, string];
  await writer`UPDATE reviews SET content = 'edited' WHERE review_code = ${a}`;
  await writer`DELETE FROM reviews WHERE review_code = ${b}`;
  await writer.begin(async (tx) => {
    await tx`UPDATE reviews SET content = 'first' WHERE review_code = ${c}`;
    await tx`UPDATE reviews SET content = 'second', rating = 1 WHERE review_code = ${c}`;
  });
  await writer`UPDATE reviews SET content = 'again' WHERE review_code = ${a}`;
  await writer`DELETE FROM reviews WHERE review_code = ${d}`;
  await insertReview(fixture, 2);
  await transactionsSettled(database);
}

/** The first verified request from the `from`th on that `match`es, as soon as it arrives. */
async function arrival(match: (request: Received) => boolean, from = 0): Promise<Received> {
  for (let index = from; ; index++) {
    await receiver.waitForRequests(index + 1);
    const request = receiver.requests[index] as Received;
    if (match(request)) return request;
  }
}

/** The feed position an event's cursor seals, as [xid, seq]. */
function positionOf(fixture: Fixture, request: Received): [number, number] {
  const scope = { brandCode: fixture.brandCode, partnerId: fixture.partnerId };
  const position = openFeedCursor(cursorKey, request.event.data.cursor as string, scope);
  if (!position || position === 'expired' || position.kind !== 'changes') throw new Error('not a changes cursor');
  return [position.xid, position.seq];
}

const isAfter = ([xid, seq]: [number, number], [xidBefore, seqBefore]: [number, number]) =>
  xid > xidBefore || (xid === xidBefore && seq > seqBefore);

/** The brand's review list as the API answers it. */
async function listed(instance: Instance, brandCode: string): Promise<Map<string, Review>> {
  const all = new Map<string, Review>();
  for (let page = 1; ; page++) {
    const response = await fetch(`${instance.base}/partner/v1/brands/${brandCode}/reviews?page=${page}&limit=100`, {
      headers: { 'x-partner-api-key': DEMO_KEYS.active },
    });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: { items: Review[]; has_next: boolean } };
    for (const item of data.items) all.set(item.review_id, item);
    if (!data.has_next) return all;
  }
}

const deliveriesOf = (webhookId: string) =>
  database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, webhookId));

const attemptsOf = (webhookId: string) =>
  database.db.select().from(webhookAttempts).where(eq(webhookAttempts.endpointId, webhookId));

describe.skipIf(DRIVER !== 'postgres')('webhooks from several instances on one PostgreSQL (D-28)', () => {
  beforeAll(async () => {
    database = await openTestDatabase();
    writer = postgres(database.url ?? '', { max: 1 });
    cursorKey = await loadFeedCursorKey(database.db);
    // Only this file's endpoints are delivered to.
    await database.db
      .update(webhookEndpoints)
      .set({ status: 'DISABLED' })
      .where(eq(webhookEndpoints.id, DEMO_WEBHOOK.id));
    receiver = new WebhookReceiver();
    url = await receiver.start();
  });

  afterAll(async () => {
    for (const instance of instances.filter(running)) instance.child.kill('SIGKILL');
    await receiver?.close();
    await writer?.end();
  });

  describe('two instances, nothing failing', () => {
    let one: Instance;
    let two: Instance;
    beforeAll(async () => {
      [one, two] = await Promise.all([startInstance(), startInstance()]);
    });
    afterAll(stopInstances);

    it('every change arrives verified, in order per review, each webhook-id once: the events rebuild the brand’s list', {
      timeout: 120_000,
    }, async () => {
      const fixture = await newEndpoint();
      await writerMix(fixture);
      const last = await currentChangesPosition(database.db, { id: fixture.brandId, brandCode: fixture.brandCode });
      // The event of the brand's last change is made after every earlier one: once it arrives, all exist.
      await arrival(
        (request) =>
          request.event.data.brand_code === fixture.brandCode &&
          positionOf(fixture, request).join() === [last?.xid, last?.seq].join(),
      );
      const made = (await deliveriesOf(fixture.webhookId)).map((row) => row.id).sort();
      await Promise.all(made.map((id) => arrival((request) => request.id === id)));

      const requests = receiver.requests.filter((request) => request.event.data.brand_code === fixture.brandCode);
      expect(receiver.unverified).toEqual([]);
      expect(requests.map((request) => request.id).sort()).toEqual(made);
      expect(receiver.maxInFlightPerReview).toBe(1);
      // Each review's events arrive in the feed's order: their positions only move forward.
      const seen = new Map<string, [number, number]>();
      for (const request of requests) {
        const review = request.event.data.review_id as string;
        const at = positionOf(fixture, request);
        expect(isAfter(at, seen.get(review) ?? [-1, -1])).toBe(true);
        seen.set(review, at);
      }
      expect(applied(requests)).toEqual(await listed(one, fixture.brandCode));
      // Recorded as delivered by one attempt each: no instance sent an event the other had.
      await eventually(
        () => deliveriesOf(fixture.webhookId),
        (rows) => rows.length === made.length && rows.every((row) => row.status === 'DELIVERED'),
      );
      const attempts = await attemptsOf(fixture.webhookId);
      expect(attempts.map((attempt) => attempt.deliveryId).sort()).toEqual(made);
      expect(attempts.map((attempt) => attempt.statusCode)).toEqual(made.map(() => 204));
      // The instances' metrics count those attempts between them, and no lag once all arrived.
      const delivered = async () =>
        (await metric(one, 'partner_api_webhook_attempts_total{outcome="delivered"}')) +
        (await metric(two, 'partner_api_webhook_attempts_total{outcome="delivered"}'));
      expect(await eventually(delivered, (count) => count >= made.length)).toBe(made.length);
      await eventually(
        () => Promise.all([one, two].map((instance) => metric(instance, 'partner_api_webhook_lag_seconds'))),
        (lags) => lags.every((lag) => lag === 0),
      );
    });

    it('each instance delivers from a thread of its own, not the one that answers calls', async () => {
      for (const instance of [one, two])
        expect((await instance.logged('webhook delivery started')).thread).toBeGreaterThan(0);
    });

    it('SIGTERM drains each instance, its delivery included, and it exits 0', { timeout: 60_000 }, async () => {
      const stopping = [one, two];
      await stopInstances();
      for (const instance of stopping) {
        expect(await instance.exited).toBe(0);
        expect(instance.lines.find((line) => line.msg === 'stopped')).toMatchObject({ drained: true });
      }
    });
  });

  describe('an instance stopped mid-delivery', () => {
    afterAll(stopInstances);

    it('SIGTERM cuts the attempt short and gives the event back at once, unrecorded; the instance exits 0', {
      timeout: 120_000,
    }, async () => {
      const fixture = await newEndpoint();
      // The receiver holds every attempt of this brand open.
      receiver.answer = (request) =>
        request.event.data.brand_code === fixture.brandCode ? new Promise<never>(() => undefined) : { status: 204 };
      const attempting = await startInstance();
      const code = await insertReview(fixture, 3);
      await transactionsSettled(database);
      const held = await arrival((request) => request.event.data.review_id === code);
      const [leased] = await deliveriesOf(fixture.webhookId);
      expect(leased).toMatchObject({ id: held.id, leaseOwner: expect.any(String) });

      attempting.child.kill('SIGTERM');
      expect(await attempting.exited).toBe(0);
      expect(attempting.lines.find((line) => line.msg === 'stopped')).toMatchObject({ drained: true });
      // Given back, not counted: any instance may send it at once, as its first attempt.
      const [released] = await deliveriesOf(fixture.webhookId);
      expect(released).toMatchObject({ status: 'PENDING', attempts: 0, leaseOwner: null, leaseUntil: null });
      expect(await attemptsOf(fixture.webhookId)).toEqual([]);
    });
  });

  describe('an instance killed mid-delivery', () => {
    afterAll(stopInstances);

    it('loses nothing: once its lease runs out, the other instance sends the event with the same webhook-id', {
      timeout: 120_000,
    }, async () => {
      const fixture = await newEndpoint();
      // The receiver never answers the first attempt; it records when each request arrived.
      const arrivedAt = new Map<Received, number>();
      receiver.answer = (request) => {
        arrivedAt.set(request, Date.now());
        const first = request === receiver.requests.find((item) => item.event.data.brand_code === fixture.brandCode);
        return first ? new Promise<never>(() => undefined) : { status: 204 };
      };
      // One instance alone takes the event, so the process attempting it is known.
      const attempting = await startInstance({ WEBHOOK_LEASE_MS: String(LEASE_MS) });
      const code = await insertReview(fixture, 4);
      await transactionsSettled(database);
      const held = await arrival((request) => request.event.data.review_id === code);
      const [lease] = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, held.id));
      expect(lease).toMatchObject({ status: 'PENDING', leaseOwner: expect.any(String), leaseUntil: expect.any(Date) });

      // Another instance starts, and the attempting one is killed while the receiver still holds its attempt.
      const other = await startInstance({ WEBHOOK_LEASE_MS: String(LEASE_MS) });
      process.kill(attempting.child.pid as number, 'SIGKILL');
      await attempting.exited;
      expect(attempting.child.signalCode).toBe('SIGKILL');

      const again = await arrival((request) => request.id === held.id, receiver.requests.indexOf(held) + 1);
      expect(running(other)).toBe(true);
      expect(again.event).toEqual(held.event);
      expect(arrivedAt.get(again)).toBeGreaterThanOrEqual(lease?.leaseUntil?.getTime() ?? Number.POSITIVE_INFINITY);
      // The killed instance recorded nothing; the other's attempt delivered the event.
      await eventually(
        () => deliveriesOf(fixture.webhookId),
        (rows) => rows.length === 1 && rows[0]?.status === 'DELIVERED',
      );
      const attempts = await attemptsOf(fixture.webhookId);
      expect(attempts.map((attempt) => [attempt.deliveryId, attempt.attempt, attempt.statusCode])).toEqual([
        [held.id, 1, 204],
      ]);
      expect(receiver.unverified).toEqual([]);
    });
  });
});
