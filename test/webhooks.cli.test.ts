import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import { type AddressInfo, Server } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { kstDayStart } from '../db/kst';
import { currentChangesPosition, loadFeedCursorKey, pruneReviewChanges } from '../db/queries/review-changes';
import { positionsOf } from '../db/queries/webhooks';
import { brands, reviews, webhookAttempts, webhookDeliveries, webhookEndpoints } from '../db/schema';
import { DEMO_KEYS, DEMO_WEBHOOK } from '../db/seed/demo';
import { openSecret } from '../db/webhook-secrets';
import { createCaller } from '../routers';
import { sealFeedCursor } from '../routers/reviews/feed-cursor';
import { createRequestContext } from '../server/trpc/context';
import {
  addEndpoint,
  attemptTest,
  describeEndpoints,
  disableEndpoint,
  EXPIRED_CURSOR,
  enableEndpoint,
  endpointNamed,
  Refusal,
  replayFrom,
  resealSecrets,
  rotateSecret,
} from '../server/webhooks/admin';
import { postDelivery } from '../server/webhooks/attempt';
import { signedHeaders } from '../server/webhooks/sign';
import { checkTarget, type Target } from '../server/webhooks/target';
import { DRIVER, openTestDatabase, transactionsSettled } from './support/database';
import { type BrandFixture, createBrandWithReviews } from './support/factories';
import { built } from './support/server-process';
import { testServices } from './support/services';
import { addTestEndpoint } from './support/webhook-delivery';
import { WebhookReceiver } from './support/webhook-receiver';

// The operator's `webhooks` command (D-28): endpoints are added, listed, disabled, enabled, rotated,
// replayed and tested from the CLI; the partner API stays read-only.

const root = path.resolve(import.meta.dirname, '..');
const KEY = randomBytes(32);
const FIRST = kstDayStart('2026-05-01').getTime();

let database: DatabaseHandle & { url?: string };
let brand: BrandFixture;
let target: Target;
const receiver = new WebhookReceiver();
let receiverUrl: string;

beforeAll(async () => {
  receiverUrl = await receiver.start();
  database = await openTestDatabase();
  brand = await createBrandWithReviews(database.db, {
    critical: [1, 2],
    platforms: ['BAEMIN'],
    reviews: [0, 1, 2].map((index) => ({ shop: 0, writtenAt: new Date(FIRST + index * 60_000), rating: 5 })),
  });
  // The brand's changes are in the feed only once every transaction begun before them has ended, on the
  // whole server (D-26): until then its position, where an endpoint starts, is before them.
  await transactionsSettled(database);
  const checked = await checkTarget('http://127.0.0.1:9/hook', true);
  if (!('target' in checked)) throw new Error('loopback with the allowance');
  target = checked.target;
});

afterAll(() => receiver.close());

beforeEach(() => {
  receiver.received.length = 0;
  receiver.requests.length = 0;
  receiver.answer = () => ({ status: 204 });
});

const add = (request: Partial<Parameters<typeof addEndpoint>[2]> = {}) =>
  addEndpoint(database.db, KEY, { partner: 'Demo Foods', target, brandCodes: [], criticalOnly: false, ...request });

/** An endpoint of the fixture's brand delivering to `url` (a loopback address: allowed in tests). */
function addAt(url: string, db = database.db, key = KEY) {
  return addTestEndpoint(db, key, url);
}

async function deliveryOf(id: string) {
  const [row] = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return row;
}

function attemptsOf(id: string) {
  const a = webhookAttempts;
  return database.db
    .select({ attempt: a.attempt, statusCode: a.statusCode, error: a.error, nextAttemptAt: a.nextAttemptAt })
    .from(a)
    .where(eq(a.deliveryId, id));
}

async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [built('server/cli/webhooks.ts'), ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: database.url ?? 'postgres://127.0.0.1:1/none', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('add', () => {
  it('gives an opaque wh_ id and a whsec_ secret, stored sealed, starting each brand from now', async () => {
    const added = await add({ brandCodes: [brand.brandCode] });
    expect(added.id).toMatch(/^wh_[A-Za-z0-9]{24}$/);
    expect(added.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const stored = await endpointNamed(database.db, added.id);
    expect(stored.secret).not.toContain(added.secret.slice(6));
    expect(openSecret(KEY, added.id, stored.secret)).toBe(added.secret);
    const positions = await positionsOf(database.db, added.id);
    expect([...positions.values()]).toEqual([
      await currentChangesPosition(database.db, { id: brand.brandId, brandCode: brand.brandCode }),
    ]);
  });

  it('refuses a brand of another partner in one line', async () => {
    await expect(add({ brandCodes: [brand.brandCode, 'burger-town'] })).rejects.toThrow(
      new Refusal('not a brand of Demo Foods: burger-town'),
    );
  });

  it('refuses private, loopback and link-local targets and plain http without the allowance', async () => {
    for (const url of ['https://127.0.0.1/', 'https://10.1.2.3/', 'https://[::1]/', 'https://169.254.169.254/']) {
      expect(await checkTarget(url, false)).toMatchObject({ refused: expect.stringMatching(/public addresses/) });
    }
    expect(await checkTarget('https://[::ffff:192.168.0.1]/', false)).toMatchObject({
      refused: expect.stringMatching(/private/),
    });
    expect(await checkTarget('http://93.184.215.14/', false)).toMatchObject({
      refused: expect.stringMatching(/https/),
    });
    expect(await checkTarget('https://93.184.215.14/', false)).toMatchObject({ target: { address: '93.184.215.14' } });
    expect(await checkTarget('http://127.0.0.1:8080/', true)).toMatchObject({ target: { address: '127.0.0.1' } });
  });
});

describe('list, disable, enable, rotate-secret, test, replay', () => {
  it('lists every endpoint with its brands and state, never a secret', async () => {
    const added = await add();
    const rows = await describeEndpoints(database.db);
    expect(rows.find((row) => row.id === added.id)).toEqual({
      id: added.id,
      partner: 'Demo Foods',
      url: 'http://127.0.0.1:9/hook',
      brands: '(every brand)',
      events: 'all',
      status: 'ACTIVE',
    });
    expect(JSON.stringify(rows)).not.toContain(added.secret.slice(6));
  });

  it('disable keeps the position; enable resumes from it', async () => {
    const added = await add({ brandCodes: [brand.brandCode] });
    const before = await positionsOf(database.db, added.id);
    await disableEndpoint(database.db, await endpointNamed(database.db, added.id));
    expect(await endpointNamed(database.db, added.id)).toMatchObject({ status: 'DISABLED' });
    await enableEndpoint(database.db, await endpointNamed(database.db, added.id), false);
    expect(await endpointNamed(database.db, added.id)).toMatchObject({ status: 'ACTIVE', disabledReason: null });
    expect(await positionsOf(database.db, added.id)).toEqual(before);
  });

  it('enable says why when the feed can no longer continue; --from-now starts from now with feed.expired', async () => {
    const added = await add({ brandCodes: [brand.brandCode] });
    await disableEndpoint(database.db, await endpointNamed(database.db, added.id));
    // A range change ends every position of the brand (D-26).
    await database.db.update(brands).set({ criticalStarMax: 3 }).where(eq(brands.id, brand.brandId));
    await transactionsSettled(database);
    const endpoint = await endpointNamed(database.db, added.id);
    await expect(enableEndpoint(database.db, endpoint, false)).rejects.toThrow(/cannot resume .*--from-now/);
    expect(await endpointNamed(database.db, added.id)).toMatchObject({ status: 'DISABLED' });
    await enableEndpoint(database.db, endpoint, true);
    expect(await endpointNamed(database.db, added.id)).toMatchObject({ status: 'ACTIVE' });
    const queued = await database.db
      .select({ type: webhookDeliveries.type, body: webhookDeliveries.body })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, added.id));
    expect(queued.map((row) => [row.type, JSON.parse(row.body).data])).toEqual([
      ['feed.expired', { brand_code: brand.brandCode }],
    ]);
  });

  it('rotate-secret keeps the old secret for 24 hours beside the new one', async () => {
    const added = await add();
    const now = new Date('2026-11-01T00:00:00Z');
    const rotated = await rotateSecret(database.db, KEY, await endpointNamed(database.db, added.id), now);
    const stored = await endpointNamed(database.db, added.id);
    expect(openSecret(KEY, added.id, stored.secret)).toBe(rotated.secret);
    expect(openSecret(KEY, added.id, stored.previousSecret ?? '')).toBe(added.secret);
    expect(stored.previousSecretUntil).toEqual(new Date('2026-11-02T00:00:00Z'));
  });

  it('test attempts a signed webhook.test at once and records it as the first attempt', async () => {
    const added = await addAt(receiverUrl);
    receiver.secrets = [added.secret];
    const endpoint = await endpointNamed(database.db, added.id);
    const { id, outcome } = await attemptTest(database.db, KEY, endpoint, { allowPrivateTargets: true });
    expect(id).toMatch(/^msg_[A-Za-z0-9]{24}$/);
    expect(outcome).toMatchObject({ statusCode: 204, error: null });
    expect(receiver.received.map((item) => [item.id, item.event.type, item.event.data])).toEqual([
      [id, 'webhook.test', { webhook_id: added.id }],
    ]);
    expect(await deliveryOf(id)).toMatchObject({ status: 'DELIVERED', attempts: 1, leaseOwner: null });
    expect(await attemptsOf(id)).toEqual([{ attempt: 1, statusCode: 204, error: null, nextAttemptAt: null }]);
  });

  it('a failed test is recorded with its answer and left to the retry schedule', async () => {
    const added = await addAt(receiverUrl);
    receiver.secrets = [added.secret];
    receiver.answer = () => ({ status: 503, headers: { 'retry-after': '120' }, body: 'down\nfor now' });
    const endpoint = await endpointNamed(database.db, added.id);
    const before = Date.now();
    const { id, outcome } = await attemptTest(database.db, KEY, endpoint, { allowPrivateTargets: true });
    expect(outcome).toMatchObject({ statusCode: 503, error: 'HTTP 503: down\nfor now' });
    const row = await deliveryOf(id);
    expect(row).toMatchObject({ status: 'PENDING', attempts: 1, leaseOwner: null });
    // The receiver's Retry-After (120 s) is later than the schedule's second attempt (5 s).
    expect(row?.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(before + 120_000);
    expect(await attemptsOf(id)).toEqual([
      { attempt: 1, statusCode: 503, error: 'HTTP 503: down\nfor now', nextAttemptAt: row?.nextAttemptAt },
    ]);
  });

  it('a test to a target refused now is recorded as refused, nothing sent', async () => {
    const added = await addAt(receiverUrl);
    const endpoint = await endpointNamed(database.db, added.id);
    const { id, outcome } = await attemptTest(database.db, KEY, endpoint, { allowPrivateTargets: false });
    expect(outcome).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/^target refused: webhooks are delivered over https only/),
    });
    expect(receiver.requests).toEqual([]);
    expect(await attemptsOf(id)).toHaveLength(1);
  });

  it('test under another key stops before anything is written', async () => {
    const added = await addAt(receiverUrl);
    const endpoint = await endpointNamed(database.db, added.id);
    await expect(attemptTest(database.db, randomBytes(32), endpoint, { allowPrivateTargets: true })).rejects.toThrow(
      /does not open/,
    );
    expect(
      await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, added.id)),
    ).toEqual([]);
  });

  it('replay makes new events from a feed position', async () => {
    const added = await add({ brandCodes: [brand.brandCode] });
    const endpoint = await endpointNamed(database.db, added.id);
    const scope = { id: brand.brandId, brandCode: brand.brandCode };
    const start = await currentChangesPosition(database.db, scope);
    if (!start) throw new Error('the brand has a position');
    await database.db
      .update(reviews)
      .set({ content: 'changed' })
      .where(eq(reviews.reviewCode, brand.reviewCodes[0] ?? ''));
    await transactionsSettled(database);
    const cursor = sealFeedCursor(await loadFeedCursorKey(database.db), start, {
      brandCode: brand.brandCode,
      partnerId: endpoint.partnerId,
    });
    expect(await replayFrom(database.db, endpoint, cursor, [])).toEqual({ brandCode: brand.brandCode, events: 1 });
    await expect(replayFrom(database.db, endpoint, `${cursor}x`, [])).rejects.toThrow(Refusal);
  });

  it('prunes nothing an endpoint needs silently: a pruned position is refused at enable', async () => {
    const added = await add({ brandCodes: [brand.brandCode] });
    await database.db
      .update(reviews)
      .set({ content: 'again' })
      .where(eq(reviews.reviewCode, brand.reviewCodes[1] ?? ''));
    await database.db.update(webhookEndpoints).set({ status: 'DISABLED' }).where(eq(webhookEndpoints.id, added.id));
    await transactionsSettled(database);
    await pruneReviewChanges(database.db, new Date(Date.now() + 60_000));
    await expect(enableEndpoint(database.db, await endpointNamed(database.db, added.id), false)).rejects.toThrow(
      /cannot resume/,
    );
  });
});

describe('the command', () => {
  it('--help prints the usage and does nothing else', async () => {
    const answer = await cli(['--help'], { DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    expect(answer.stdout).toMatch(/^usage: npm run webhooks/);
  });

  it('refuses a private target without the allowance in one line, exit 2, before touching the database', async () => {
    const env = { DATABASE_URL: 'postgres://127.0.0.1:1/none', WEBHOOK_SECRETS_KEY: KEY.toString('base64') };
    const answer = await cli(['add', '--partner', 'Demo Foods', '--url', 'https://127.0.0.1/hook'], env);
    expect(answer.code).toBe(2);
    expect(answer.stderr).toMatch(/^127\.0\.0\.1 resolves to a loopback address .*\n$/);
    expect(answer.stderr.split('\n')).toHaveLength(2);
  });

  it('--help and the operations guide name every command and option', async () => {
    const { stdout } = await cli(['--help'], { DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    const operations = readFileSync(path.join(root, 'docs/operations.md'), 'utf8');
    for (const named of ['replay ID [--brand CODE] --cursor C', 'test ID', 'reseal-secrets', 'WEBHOOK_SECRETS_OLD_KEY'])
      expect(stdout, named).toContain(named);
    for (const named of ['replay ID', '--brand', 'test wh_', 'reseal-secrets', 'WEBHOOK_SECRETS_OLD_KEY'])
      expect(operations, named).toContain(named);
  });

  it.runIf(DRIVER === 'postgres')('test prints one line with the outcome: exit 0 on a 2xx, else 1', async () => {
    const added = await addAt(receiverUrl);
    receiver.secrets = [added.secret];
    const env = { WEBHOOK_SECRETS_KEY: KEY.toString('base64'), WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' };
    const delivered = await cli(['test', added.id], env);
    expect(delivered).toMatchObject({ code: 0, stderr: '' });
    expect(delivered.stdout).toMatch(new RegExp(`^webhook\\.test msg_\\w{24} to ${added.id}: 204 in \\d+ ms\n$`));
    receiver.answer = () => ({ status: 500, body: 'broken\nreceiver' });
    const failed = await cli(['test', added.id], env);
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect(failed.stderr).toMatch(
      new RegExp(`^webhook\\.test msg_\\w{24} to ${added.id} failed after \\d+ ms: HTTP 500: broken receiver\n$`),
    );
  });

  it('refuses add without WEBHOOK_SECRETS_KEY in one line', async () => {
    const answer = await cli(['add', '--partner', 'Demo Foods', '--url', 'https://example.com/hook'], {
      DATABASE_URL: 'postgres://127.0.0.1:1/none',
      WEBHOOK_SECRETS_KEY: '',
    });
    expect(answer.code).toBe(1);
    expect(answer.stderr).toBe('invalid configuration: WEBHOOK_SECRETS_KEY is required to keep webhook secrets\n');
  });

  it.runIf(DRIVER === 'postgres')('add prints exactly its id and secret; a foreign brand exits 2', async () => {
    const env = { WEBHOOK_SECRETS_KEY: KEY.toString('base64'), WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' };
    const answer = await cli(['add', '--partner', 'Demo Foods', '--url', 'http://127.0.0.1:9/'], env);
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    expect(answer.stdout).toMatch(/^id: wh_[A-Za-z0-9]{24}\nsecret: whsec_[A-Za-z0-9+/]{32}\n$/);
    const foreign = await cli(
      ['add', '--partner', 'Demo Foods', '--url', 'http://127.0.0.1:9/', '--brand', 'nope'],
      env,
    );
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toBe('not a brand of Demo Foods: nope (--help for usage)\n');
  });
});

describe('replay from any cursor the feed gives', () => {
  let fixture: BrandFixture;
  let endpoint: Awaited<ReturnType<typeof endpointNamed>>;
  const feed = (cursor?: string, limit = 1) =>
    createCaller(createRequestContext(testServices(database.db), { apiKey: DEMO_KEYS.active })).reviews.changes({
      brand_code: fixture.brandCode,
      cursor,
      limit,
    });
  const replayed = async (cursor: string) => {
    const before = new Set((await queued()).map((row) => row.id));
    const result = await replayFrom(database.db, endpoint, cursor, [fixture.brandCode]);
    const made = (await queued()).filter((row) => !before.has(row.id));
    return {
      result,
      events: made.map((row) => JSON.parse(row.body) as { type: string; data: { review_id: string; cursor: string } }),
    };
  };
  const queued = () =>
    database.db
      .select({ id: webhookDeliveries.id, body: webhookDeliveries.body })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpoint.id))
      .orderBy(webhookDeliveries.seq);

  beforeAll(async () => {
    fixture = await createBrandWithReviews(database.db, {
      critical: [1, 2],
      platforms: ['BAEMIN'],
      reviews: [0, 1, 2].map((index) => ({ shop: 0, writtenAt: new Date(FIRST + index * 60_000), rating: 5 })),
    });
    await transactionsSettled(database);
    const added = await add({ brandCodes: [fixture.brandCode] });
    endpoint = await endpointNamed(database.db, added.id);
  });

  it("accepts the first page's next_cursor inside a walk: the rest of the walk, then the changes since it began", async () => {
    const first = await feed();
    const [newest, middle, oldest] = [...fixture.reviewCodes].reverse();
    expect(first.data.items.map((item) => item.review_id)).toEqual([newest]);
    await database.db
      .update(reviews)
      .set({ content: 'edited' })
      .where(eq(reviews.reviewCode, newest ?? ''));
    await transactionsSettled(database);
    const { result, events } = await replayed(first.data.next_cursor);
    expect(result).toEqual({ brandCode: fixture.brandCode, events: 3 });
    expect(events.map((event) => [event.type, event.data.review_id])).toEqual([
      ['review.upserted', middle],
      ['review.upserted', oldest],
      ['review.upserted', newest],
    ]);
    // Each event's cursor continues the feed right after it.
    const afterMiddle = await feed(events[0]?.data.cursor, 100);
    expect(afterMiddle.data.items.map((item) => item.review_id)).toEqual([oldest]);
    const afterLast = await feed(events[2]?.data.cursor, 100);
    expect(afterLast.data).toMatchObject({ items: [], has_next: false });
  });

  it("accepts a walk's final cursor: the changes after it", async () => {
    let page = await feed();
    while (page.data.items.length > 0 && page.data.has_next) page = await feed(page.data.next_cursor);
    const final = page.data.next_cursor;
    expect((await replayed(final)).events).toEqual([]);
    const [oldest] = fixture.reviewCodes;
    await database.db
      .update(reviews)
      .set({ content: 'again' })
      .where(eq(reviews.reviewCode, oldest ?? ''));
    await transactionsSettled(database);
    const { events } = await replayed(final);
    expect(events.map((event) => [event.type, event.data.review_id])).toEqual([['review.upserted', oldest]]);
  });

  it('refuses a cursor of no brand of the webhook in one line (exit 2)', async () => {
    const other = await feed();
    await expect(replayFrom(database.db, endpoint, `${other.data.next_cursor}x`, [])).rejects.toThrow(
      new Refusal(`not a feed cursor of a brand of webhook ${endpoint.id}`),
    );
  });

  it('says plainly that the feed no longer continues from an expired cursor (exit 1)', async () => {
    const { data } = await feed(undefined, 100);
    await database.db
      .update(reviews)
      .set({ content: 'pruned' })
      .where(eq(reviews.reviewCode, fixture.reviewCodes[1] ?? ''));
    await transactionsSettled(database);
    await pruneReviewChanges(database.db, new Date(Date.now() + 60_000));
    const replay = replayFrom(database.db, endpoint, data.next_cursor, []);
    await expect(replay).rejects.toThrow(new Error(EXPIRED_CURSOR));
    await expect(replay).rejects.not.toBeInstanceOf(Refusal);
    if (DRIVER !== 'postgres') return;
    const answer = await cli(['replay', endpoint.id, '--cursor', data.next_cursor]);
    expect(answer).toMatchObject({ code: 1, stdout: '', stderr: `${EXPIRED_CURSOR}\n` });
  });
});

describe('reseal-secrets', () => {
  // A database of its own: resealing covers every endpoint, and this one holds only the demo's and these.
  const NEW_KEY = randomBytes(32);
  const OLD_KEY = DEMO_WEBHOOK.secretsKey;
  let own: DatabaseHandle & { url?: string };

  beforeAll(async () => {
    own = await openTestDatabase();
  });

  it('seals every secret, a previous one in its overlap too, under the new key; deliveries verify as before', async () => {
    const plain = await addAt(receiverUrl, own.db, OLD_KEY);
    const rotated = await addAt(receiverUrl, own.db, OLD_KEY);
    const next = await rotateSecret(own.db, OLD_KEY, await endpointNamed(own.db, rotated.id));
    expect(await resealSecrets(own.db, OLD_KEY, NEW_KEY)).toEqual({ resealed: 3, current: 0 });

    const demo = await endpointNamed(own.db, DEMO_WEBHOOK.id);
    expect(openSecret(NEW_KEY, demo.id, demo.secret)).toBe(DEMO_WEBHOOK.secret);
    const twice = await endpointNamed(own.db, rotated.id);
    expect(openSecret(NEW_KEY, twice.id, twice.secret)).toBe(next.secret);
    expect(openSecret(NEW_KEY, twice.id, twice.previousSecret ?? '')).toBe(rotated.secret);
    expect(() => openSecret(OLD_KEY, twice.id, twice.secret)).toThrow(/does not open/);

    for (const [added, secrets] of [
      [plain, [plain.secret]],
      [rotated, [rotated.secret, next.secret]],
    ] as const) {
      receiver.requests.length = 0;
      receiver.secrets = [...secrets];
      const { outcome } = await attemptTest(own.db, NEW_KEY, await endpointNamed(own.db, added.id), {
        allowPrivateTargets: true,
      });
      expect(outcome.statusCode).toBe(204);
      expect(receiver.requests.map((item) => item.verifiedBy)).toEqual([secrets]);
    }
  });

  it('a second run finds every secret already under the new key and changes nothing', async () => {
    const before = await own.db.select().from(webhookEndpoints);
    expect(await resealSecrets(own.db, OLD_KEY, NEW_KEY)).toEqual({ resealed: 0, current: before.length });
    expect(await own.db.select().from(webhookEndpoints)).toEqual(before);
  });

  it('refuses a wrong old key in one line and changes nothing', async () => {
    const under = await addAt(receiverUrl, own.db, OLD_KEY);
    const before = await own.db.select().from(webhookEndpoints);
    const wrong = randomBytes(32);
    await expect(resealSecrets(own.db, wrong, NEW_KEY)).rejects.toThrow(
      new Refusal(
        `WEBHOOK_SECRETS_OLD_KEY does not open the secret of webhook ${under.id}: not the key it was sealed with`,
      ),
    );
    expect(await own.db.select().from(webhookEndpoints)).toEqual(before);
    if (DRIVER !== 'postgres') return;
    const env = { DATABASE_URL: own.url ?? '', WEBHOOK_SECRETS_KEY: NEW_KEY.toString('base64') };
    const refused = await cli(['reseal-secrets'], { ...env, WEBHOOK_SECRETS_OLD_KEY: wrong.toString('base64') });
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(/^WEBHOOK_SECRETS_OLD_KEY does not open the secret of webhook wh_\w+: .*\n$/);
    expect(refused.stderr.split('\n')).toHaveLength(2);
    const done = await cli(['reseal-secrets'], { ...env, WEBHOOK_SECRETS_OLD_KEY: OLD_KEY.toString('base64') });
    expect(done).toEqual({
      code: 0,
      stdout: `resealed the secrets of 1 webhooks under WEBHOOK_SECRETS_KEY (${before.length - 1} already were)\n`,
      stderr: '',
    });
  });

  it('needs WEBHOOK_SECRETS_OLD_KEY, in one line', async () => {
    const answer = await cli(['reseal-secrets'], {
      DATABASE_URL: 'postgres://127.0.0.1:1/none',
      WEBHOOK_SECRETS_KEY: NEW_KEY.toString('base64'),
      WEBHOOK_SECRETS_OLD_KEY: '',
    });
    expect(answer).toMatchObject({ code: 1, stdout: '' });
    expect(answer.stderr).toBe(
      'invalid configuration: WEBHOOK_SECRETS_OLD_KEY (the key being replaced) is required to reseal\n',
    );
  });
});

describe('the partner guide § Webhooks: each receiver it shows verifies a real delivery', () => {
  const guide = readFileSync(path.join(root, 'docs/partner-guide.md'), 'utf8');
  const section = guide.slice(
    guide.indexOf('\n## Webhooks\n'),
    guide.indexOf('\n## ', guide.indexOf('\n## Webhooks\n') + 1),
  );
  const receivers = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1] as string);
  // Under node_modules, so that the examples' imports resolve to this project's packages.
  const dir = mkdtempSync(path.join(root, 'node_modules', '.guide-receivers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('shows an express receiver and a plain Node one', () => {
    expect(receivers.map((code) => /from 'express'/.test(code))).toEqual([true, false]);
    expect(receivers[1]).toMatch(/from 'node:http'/);
  });

  it.each(receivers.map((code, index) => [index === 0 ? 'express' : 'node:http', index, code] as const))(
    'the %s receiver answers 204 to a signed delivery and 400 to one signed with another secret',
    async (_, index, code) => {
      const added = await addAt(receiverUrl);
      const file = path.join(dir, `receiver-${index}.mjs`);
      writeFileSync(file, code);
      // The example listens on port 4000: here it gets a free port on the loopback address instead.
      const servers: Server[] = [];
      const listen = Server.prototype.listen;
      const redirect = vi.spyOn(Server.prototype, 'listen').mockImplementation(function (this: Server) {
        servers.push(this);
        return (listen as (port: number, host: string) => Server).call(this, 0, '127.0.0.1');
      });
      const logged = vi.spyOn(console, 'log').mockImplementation(() => {});
      vi.stubEnv('WEBHOOK_SECRET', added.secret);
      try {
        await import(pathToFileURL(file).href);
        const [server] = servers;
        if (!server) throw new Error('the example starts no server');
        if (!server.listening) await once(server, 'listening');
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
        await database.db.update(webhookEndpoints).set({ url }).where(eq(webhookEndpoints.id, added.id));
        const endpoint = await endpointNamed(database.db, added.id);
        const { outcome } = await attemptTest(database.db, KEY, endpoint, { allowPrivateTargets: true });
        expect(outcome).toMatchObject({ statusCode: 204, error: null });
        expect(logged.mock.calls).toEqual([['webhook.test', { webhook_id: added.id }]]);

        const checked = await checkTarget(url, true);
        if (!('target' in checked)) throw new Error('loopback with the allowance');
        const body = JSON.stringify({ type: 'webhook.test', timestamp: 'now', data: {} });
        const forged = signedHeaders('msg_forged', body, [`whsec_${randomBytes(24).toString('base64')}`], new Date());
        const refused = await postDelivery(checked.target, forged, body, {
          timeoutMs: 15_000,
          signal: new AbortController().signal,
        });
        expect(refused.statusCode).toBe(400);
        expect(logged).toHaveBeenCalledTimes(1);
      } finally {
        redirect.mockRestore();
        logged.mockRestore();
        vi.unstubAllEnvs();
        for (const server of servers) {
          (server as http.Server).closeAllConnections?.();
          server.close();
        }
      }
    },
  );
});
