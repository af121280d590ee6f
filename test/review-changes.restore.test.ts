import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { type FeedPosition, loadFeedCursorKey } from '../db/queries/review-changes';
import { brands, reviews } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { createCaller } from '../routers';
import { openFeedCursor } from '../routers/reviews/feed-cursor';
import { FeedStallWatch } from '../server/feed-stall';
import { createLogger } from '../server/logger';
import { createRequestContext } from '../server/trpc/context';
import { asPostgres, clustersUnavailable, freePort, PG_BIN, postgresUid, stopCluster } from './support/clusters';
import { openTestDatabase, transactionsSettled } from './support/database';
import { expectPartnerError } from './support/errors';
import { eventually } from './support/eventually';
import { createBrandWithReviews, type ReviewSpec } from './support/factories';
import { built } from './support/server-process';
import { testServices } from './support/services';

// D-26 across a restore: a `pg_dump` of the run's database restored into a freshly initialised cluster
// (another system identifier, transaction ids from another history). A cursor of the first answers 410
// there, before and after the new cluster's transaction ids pass the cursor's; a fresh walk answers 200.
const ROOT = path.resolve(import.meta.dirname, '..');
const skipped = clustersUnavailable(['initdb', 'pg_ctl', 'pg_resetwal', 'pg_dump', 'psql']);
const DATABASE = 'partner_restored';

const SPECS: ReviewSpec[] = Array.from({ length: 7 }, (_, index) => ({
  shop: 0,
  writtenAt: new Date(Date.UTC(2026, 4, 1) + index * 600_000),
  content: `review ${index}`,
  rating: (index % 5) + 1,
}));

let root = '';
let cluster: { dir: string; port: number; url: string } | undefined;
const handles: DatabaseHandle[] = [];

afterAll(async () => {
  for (const handle of handles.splice(0)) await handle.close();
  stopCluster(cluster);
  if (root) rmSync(root, { recursive: true, force: true });
});

const feedOn = (database: DatabaseHandle) => {
  const api = createCaller(createRequestContext(testServices(database.db), { apiKey: DEMO_KEYS.active }));
  return (brandCode: string, cursor?: string) => api.reviews.changes({ brand_code: brandCode, cursor, limit: 3 });
};

/** Pages until caught up, each 200; the copy and the last cursor. */
async function walk(database: DatabaseHandle, brandCode: string, copy = new Map<string, unknown>(), from?: string) {
  const feed = feedOn(database);
  let cursor = from;
  for (let page = 0; page < 100; page++) {
    const { data } = await feed(brandCode, cursor);
    for (const item of data.items) {
      if (item.review) copy.set(item.review_id, item.review);
      else copy.delete(item.review_id);
    }
    cursor = data.next_cursor;
    if (!data.has_next) return { copy, cursor };
  }
  throw new Error('the feed did not catch up in 100 pages');
}

async function listed(database: DatabaseHandle, brandCode: string) {
  const api = createCaller(createRequestContext(testServices(database.db), { apiKey: DEMO_KEYS.active }));
  const { data } = await api.reviews.list({ brand_code: brandCode, limit: 100 });
  return new Map<string, unknown>(data.items.map((item) => [item.review_id, item]));
}

async function openRestored() {
  const handle = await openDatabase({ url: cluster?.url ?? '', maxConnections: 2 });
  handles.push(handle);
  return handle;
}

describe.skipIf(skipped)(`a restore into another cluster${skipped ? ` — skipped: ${skipped}` : ''}`, () => {
  let original: DatabaseHandle & { url?: string };
  let brandCode = '';
  let caughtUp = '';
  let inWalk = '';
  let position: Extract<FeedPosition, { kind: 'changes' }>;

  beforeAll(async () => {
    original = await openTestDatabase();
    const fixture = await createBrandWithReviews(original.db, {
      critical: [1, 2],
      platforms: ['BAEMIN'],
      reviews: SPECS,
    });
    brandCode = fixture.brandCode;
    inWalk = (await feedOn(original)(brandCode)).data.next_cursor;
    await original.db
      .update(reviews)
      .set({ content: 'edited' })
      .where(eq(reviews.reviewCode, fixture.reviewCodes[0] ?? ''));
    await transactionsSettled(original);
    caughtUp = (await walk(original, brandCode)).cursor;
    const [brand] = await original.db
      .select({ partnerId: brands.partnerId })
      .from(brands)
      .where(eq(brands.brandCode, brandCode));
    const opened = openFeedCursor(await loadFeedCursorKey(original.db), caughtUp, {
      brandCode,
      partnerId: brand?.partnerId ?? 0,
    });
    if (typeof opened !== 'object' || opened.kind !== 'changes') throw new Error('the run’s own cursor did not open');
    position = opened;

    root = mkdtempSync(path.join(tmpdir(), 'partner-restore-'));
    chownSync(root, postgresUid(), -1);
    const port = await freePort();
    const dir = path.join(root, 'cluster');
    asPostgres('initdb', ['-D', dir, '--auth=trust', '--no-sync', '-U', 'postgres']);
    const settings = [`port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${root}'`];
    appendFileSync(
      path.join(dir, 'postgresql.conf'),
      [...settings, 'fsync = off', 'max_prepared_transactions = 2', ''].join('\n'),
    );
    asPostgres('pg_ctl', ['-D', dir, '-l', path.join(dir, 'server.log'), '-w', 'start']);
    cluster = { dir, port, url: `postgres://postgres@127.0.0.1:${port}/${DATABASE}` };
    const admin = postgres(cluster.url.replace(`/${DATABASE}`, '/postgres'), { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${DATABASE}`);
    await admin.end();
    const dump = path.join(root, 'dump.sql');
    execFileSync(path.join(PG_BIN, 'pg_dump'), ['--no-owner', '--no-privileges', '-f', dump, original.url ?? '']);
    execFileSync(path.join(PG_BIN, 'psql'), ['-q', '-v', 'ON_ERROR_STOP=1', '-f', dump, cluster.url], {
      stdio: 'pipe',
    });
  });

  it('answers 410 to a cursor of the first, and 200 to a fresh walk', async () => {
    const restored = await openRestored();
    for (const cursor of [inWalk, caughtUp])
      await expectPartnerError(feedOn(restored)(brandCode, cursor), 'PARTNER_API_CURSOR_EXPIRED');
    const { copy } = await walk(restored, brandCode);
    expect(copy).toEqual(await listed(restored, brandCode));
  });

  it('still answers 410 once its transaction ids pass the cursor’s, and a change there reaches a fresh walk', async () => {
    for (const handle of handles.splice(0)) await handle.close();
    const dir = cluster?.dir ?? '';
    asPostgres('pg_ctl', ['-D', dir, '-m', 'fast', '-w', 'stop']);
    // pg_resetwal takes a next transaction id at the start of a commit-log segment (1,048,576 ids each).
    const segment = 1_048_576;
    asPostgres('pg_resetwal', ['-x', String((Math.floor(position.xid / segment) + 1) * segment), '-D', dir]);
    asPostgres('pg_ctl', ['-D', dir, '-l', path.join(dir, 'server.log'), '-w', 'start']);
    const restored = await openRestored();
    const fresh = await walk(restored, brandCode);
    await restored.db
      .update(reviews)
      .set({ content: 'edited after the restore' })
      .where(
        sql`${reviews.reviewCode} IN (SELECT ${reviews.reviewCode} FROM ${reviews} JOIN ${brands} ON ${brands.id} = ${reviews.brandId} WHERE ${brands.brandCode} = ${brandCode} LIMIT 1)`,
      );
    await transactionsSettled(restored);
    const [{ xid } = { xid: '0' }] = await restored.rows<{ xid: string }>(
      sql`SELECT pg_current_xact_id()::text AS xid`,
    );
    expect(Number(xid)).toBeGreaterThan(position.xid);
    await expectPartnerError(feedOn(restored)(brandCode, caughtUp), 'PARTNER_API_CURSOR_EXPIRED');
    const resumed = await walk(restored, brandCode, fresh.copy, fresh.cursor);
    expect(resumed.copy).toEqual(await listed(restored, brandCode));
  });

  it('npm run feed -- expire-cursors makes every cursor there 410; a fresh walk answers 200', async () => {
    const restored = await openRestored();
    const { cursor } = await walk(restored, brandCode);
    const { stdout } = await promisify(execFile)(process.execPath, [built('server/cli/feed.ts'), 'expire-cursors'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: cluster?.url },
    });
    expect(stdout).toBe('every review change feed cursor issued so far now answers 410\n');
    await expectPartnerError(feedOn(restored)(brandCode, cursor), 'PARTNER_API_CURSOR_EXPIRED');
    const { copy } = await walk(restored, brandCode);
    expect(copy).toEqual(await listed(restored, brandCode));
  });

  it('names a prepared transaction that holds the feed back by its gid', async () => {
    const restored = await openRestored();
    const lines: Record<string, unknown>[] = [];
    const watch = new FeedStallWatch({
      db: restored.db,
      log: createLogger('debug', (line) => void lines.push(JSON.parse(line))),
      warnSeconds: 1,
    });
    const holder = postgres(cluster?.url ?? '', { max: 1, onnotice: () => {} });
    try {
      await holder.begin(async (tx) => {
        await tx`SELECT pg_current_xact_id()`;
        await tx`PREPARE TRANSACTION 'feed-stall-test'`;
      });
      await eventually(
        () => watch.check(),
        (named) => named >= 1,
      );
      expect(lines.filter((line) => line.msg === 'review change feed held back by an open transaction')).toEqual([
        expect.objectContaining({ gid: 'feed-stall-test', database: DATABASE, pid: null }),
      ]);
    } finally {
      await holder`ROLLBACK PREPARED 'feed-stall-test'`.catch(() => undefined);
      await holder.end({ timeout: 0 });
    }
    expect(await watch.check()).toBe(0);
  });
});
