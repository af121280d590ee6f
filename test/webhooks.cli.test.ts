import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { kstDayStart } from '../db/kst';
import { currentChangesPosition, loadFeedCursorKey, pruneReviewChanges } from '../db/queries/review-changes';
import { positionsOf } from '../db/queries/webhooks';
import { brands, reviews, webhookDeliveries, webhookEndpoints } from '../db/schema';
import { openSecret } from '../db/webhook-secrets';
import { sealFeedCursor } from '../routers/reviews/feed-cursor';
import {
  addEndpoint,
  describeEndpoints,
  disableEndpoint,
  enableEndpoint,
  endpointNamed,
  queueTest,
  Refusal,
  replayFrom,
  rotateSecret,
} from '../server/webhooks/admin';
import { checkTarget, type Target } from '../server/webhooks/target';
import { DRIVER, openTestDatabase, transactionsSettled } from './support/database';
import { type BrandFixture, createBrandWithReviews } from './support/factories';

// The operator's `webhooks` command (D-28): endpoints are added, listed, disabled, enabled, rotated,
// replayed and tested from the CLI; the partner API stays read-only.

const root = path.resolve(import.meta.dirname, '..');
const KEY = randomBytes(32);
const FIRST = kstDayStart('2026-05-01').getTime();

let database: DatabaseHandle & { url?: string };
let brand: BrandFixture;
let target: Target;

beforeAll(async () => {
  database = await openTestDatabase();
  brand = await createBrandWithReviews(database.db, {
    critical: [1, 2],
    platforms: ['BAEMIN'],
    reviews: [0, 1, 2].map((index) => ({ shop: 0, writtenAt: new Date(FIRST + index * 60_000), rating: 5 })),
  });
  const checked = await checkTarget('http://127.0.0.1:9/hook', true);
  if (!('target' in checked)) throw new Error('loopback with the allowance');
  target = checked.target;
});

const add = (request: Partial<Parameters<typeof addEndpoint>[2]> = {}) =>
  addEndpoint(database.db, KEY, { partner: 'Demo Foods', target, brandCodes: [], criticalOnly: false, ...request });

async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'server/cli/webhooks.ts', ...args],
      { cwd: root, env: { ...process.env, DATABASE_URL: database.url ?? 'postgres://127.0.0.1:1/none', ...env } },
    );
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

  it('test queues a webhook.test event whose data is {webhook_id}', async () => {
    const added = await add();
    const id = await queueTest(database.db, await endpointNamed(database.db, added.id));
    expect(id).toMatch(/^msg_[A-Za-z0-9]{24}$/);
    const [row] = await database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
    expect(JSON.parse(row?.body ?? '')).toMatchObject({ type: 'webhook.test', data: { webhook_id: added.id } });
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
