import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDailyAggregate } from '../db/aggregate';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { matchesKeyword } from '../db/queries/reviews/rules';
import { reviews, webhookEndpoints } from '../db/schema';
import { DEMO_KEYS, DEMO_WEBHOOK, seedDemo } from '../db/seed/demo';
import { makeDemoChanges } from '../db/seed/demo-changes';
import { createCaller } from '../routers';
import { openDemoDatabase, writeSnapshot } from '../server/demo';
import { createLogger, silentLogger } from '../server/logger';
import { createRequestContext } from '../server/trpc/context';
import { WebhookWorker } from '../server/webhooks/worker';
import { expectPartnerError } from './support/errors';
import { testServices } from './support/services';
import { WebhookReceiver } from './support/webhook-receiver';

// D-1: the embedded demo starts from the build's migrated cluster when its name matches, else from initdb;
// either way it holds the same demo data, aggregate and constraints as a cluster built the plain way
// (migrate, seed, aggregate) on the same day, keyword search's GIN indexes aside.
let scratch: string;
/** dist/, where the suite's build (its global setup) wrote the snapshot; only read by the tests. */
const snapshotDir = path.resolve(import.meta.dirname, '../dist');
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'partner-api-demo-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** Rows and an order-independent checksum of every table, and every index and constraint. */
async function contents(database: DatabaseHandle) {
  const tables = await database.rows<{ name: string }>(
    sql`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
  const out: Record<string, { rows: number; md5: string }> = {};
  // The demo starts its webhook at each start's feed position (D-28): a plain build has none.
  for (const { name } of tables.filter((table) => table.name !== 'webhook_positions')) {
    // When a run started and finished, which transaction noted a change when, and the feed's key and
    // history are that database's, not data; so is a webhook's sealed secret (a fresh nonce each time).
    const row =
      name === 'aggregate_runs'
        ? sql.raw('(x.id, x.through_day, x.kind)')
        : name === 'review_changes'
          ? sql.raw('(x.brand_id, x.review_code)')
          : name === 'review_feed_history'
            ? sql.raw('(x.id)')
            : name === 'webhook_endpoints'
              ? sql.raw('(x.id, x.partner_id, x.url, x.brand_ids, x.critical_only, x.status, x.created_at)')
              : sql.raw('x');
    const [result] = await database.rows<{ rows: number; md5: string }>(sql`
      SELECT count(*)::int AS rows, md5(coalesce(string_agg(${row}::text, E'\n' ORDER BY ${row}::text), '')) AS md5
      FROM ${sql.identifier(name)} AS x`);
    if (result) out[name] = result;
  }
  const indexes = await database.rows<{ definition: string }>(
    sql`SELECT indexdef AS definition FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`,
  );
  const constraints = await database.rows<{ definition: string }>(
    sql`SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) AS definition
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1`,
  );
  return { tables: out, indexes, constraints };
}

describe('the embedded demo', () => {
  it('holds the data of a plain build, from the snapshot or from initdb', { timeout: 300_000 }, async () => {
    const now = new Date();
    const plain = await openDatabase({});
    let reference: Awaited<ReturnType<typeof contents>>;
    try {
      await plain.migrate();
      await seedDemo(plain.db, { now });
      await buildDailyAggregate(plain.db, { now });
      reference = await contents(plain);
    } finally {
      await plain.close();
    }
    expect(reference.tables.reviews?.rows).toBeGreaterThan(1000);
    const isSearchIndex = (index: { definition: string }) => index.definition.includes(' USING gin ');
    expect(reference.indexes.filter(isSearchIndex).length).toBeGreaterThanOrEqual(3);

    const lines: { msg: string; snapshot?: boolean }[] = [];
    const log = createLogger('info', (line) => lines.push(JSON.parse(line)));
    for (const dir of [snapshotDir, path.join(scratch, 'none')]) {
      const demo = await openDemoDatabase(log, { snapshotDir: dir, now });
      try {
        const got = await contents(demo);
        expect(got.tables).toEqual(reference.tables);
        const positions = await demo.rows(sql`SELECT brand_id FROM webhook_positions`);
        expect(positions).toHaveLength(1);
        expect(got.constraints).toEqual(reference.constraints);
        expect(got.indexes).toEqual(reference.indexes.filter((index) => !isSearchIndex(index)));
        // Keyword search's own rule finds matches without the indexes.
        const [hits] = await demo.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${reviews}
          WHERE ${matchesKeyword('맛', reviews.brandId)}`);
        expect(hits?.n).toBeGreaterThan(0);
      } finally {
        await demo.close();
      }
    }
    expect(lines.filter((line) => line.msg === 'demo data loaded').map((line) => line.snapshot)).toEqual([true, false]);
  });

  it("keeps the build's snapshot in place when built again: a demo starting meanwhile may be copying it", async () => {
    const folder = await writeSnapshot(snapshotDir);
    const before = statSync(folder);
    expect(await writeSnapshot(snapshotDir)).toBe(folder);
    expect(statSync(folder)).toMatchObject({ ino: before.ino, mtimeMs: before.mtimeMs });
  });

  it('answers 410 to a cursor of an earlier run: every run starts from the same snapshot (D-26)', async () => {
    const feedOf = (database: DatabaseHandle) => {
      const api = createCaller(createRequestContext(testServices(database.db), { apiKey: DEMO_KEYS.active }));
      return (cursor?: string) => api.reviews.changes({ brand_code: 'chicken-house', cursor, limit: 100 });
    };
    const earlier = await openDemoDatabase(silentLogger, { snapshotDir });
    let cursor: string;
    try {
      cursor = (await feedOf(earlier)()).data.next_cursor;
    } finally {
      await earlier.close();
    }
    const later = await openDemoDatabase(silentLogger, { snapshotDir });
    try {
      const feed = feedOf(later);
      await expectPartnerError(feed(cursor), 'PARTNER_API_CURSOR_EXPIRED');
      const fresh = await feed();
      expect(fresh.data.items.length).toBeGreaterThan(0);
      expect((await feed(fresh.data.next_cursor)).data.items.length).toBeGreaterThan(0);
    } finally {
      await later.close();
    }
  });

  it('delivers demo:changes to its webhook, signed with the published secret: the new critical review among them (D-28)', async () => {
    const demo = await openDemoDatabase(silentLogger, { snapshotDir });
    const receiver = new WebhookReceiver();
    try {
      receiver.secrets = [DEMO_WEBHOOK.secret];
      // The demo's endpoint, pointed at this test's receiver instead of port 4000.
      await demo.db
        .update(webhookEndpoints)
        .set({ url: await receiver.start() })
        .where(eq(webhookEndpoints.id, DEMO_WEBHOOK.id));
      const made = await makeDemoChanges(demo.db);
      const worker = new WebhookWorker({
        db: demo.db,
        log: silentLogger,
        secretsKey: DEMO_WEBHOOK.secretsKey,
        allowPrivateTargets: true,
      });
      await worker.runOnce();
      await worker.stop();
      expect(receiver.unverified).toEqual([]);
      const events = new Map(receiver.received.map(({ event }) => [event.data.review_id, event]));
      expect([...events.keys()].sort()).toEqual(
        [made.replied, made.alerted, made.added, made.critical, made.removed].sort(),
      );
      expect(events.get(made.critical)).toMatchObject({
        type: 'review.upserted',
        data: { brand_code: 'chicken-house', review: { rating: 1, is_critical: true } },
      });
      expect(events.get(made.removed)).toMatchObject({ type: 'review.deleted' });
    } finally {
      await receiver.close();
      await demo.close();
    }
  });
});
