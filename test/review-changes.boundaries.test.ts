import { eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { oldestFeedHolder } from '../db/queries/feed-holder';
import {
  expireFeedCursors,
  type FeedPosition,
  loadFeedCursorKey,
  pruneReviewChanges,
} from '../db/queries/review-changes';
import { brands, reviewChanges, reviews } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { openFeedCursor, sealFeedCursor } from '../routers/reviews/feed-cursor';
import { parseConfig } from '../server/config';
import { FeedStallWatch } from '../server/feed-stall';
import { createLogger } from '../server/logger';
import { createServices, type Services } from '../server/trpc/services';
import { DRIVER, NOW, openTestDatabase, transactionsSettled } from './support/database';
import { eventually } from './support/eventually';
import { createBrandWithReviews, type ReviewSpec } from './support/factories';
import { startServer, TEST_RATE_LIMIT_PER_MINUTE } from './support/services';

// The review change feed at the boundaries of the database's life (D-26, partner guide § Keeping a copy in
// sync): a genuine cursor the database cannot continue is 410, never a short or empty page, and never 500;
// a cursor the service did not issue is 400; prunes never strand a fresh walk; what holds the feed back is
// measured and named.

const SPECS: ReviewSpec[] = Array.from({ length: 12 }, (_, index) => ({
  shop: 0,
  writtenAt: new Date(Date.UTC(2026, 4, 1) + index * 600_000),
  content: `review ${index}`,
  rating: (index % 5) + 1,
}));

type Review = { review_id: string } & Record<string, unknown>;
type Answer = { status: number; body: { status?: string; data?: FeedData } };
type FeedData = {
  items: { review_id: string; change: 'UPSERT' | 'DELETE'; review: Review | null }[];
  has_next: boolean;
  next_cursor: string;
};

/** Services on `database` whose log lines are kept: no boundary may write an error line. */
function servicesOn(database: DatabaseHandle) {
  const lines: { level: string; msg: string }[] = [];
  const log = createLogger('debug', (line) => void lines.push(JSON.parse(line)));
  const config = parseConfig({ RATE_LIMIT_PER_MINUTE: TEST_RATE_LIMIT_PER_MINUTE });
  const services = createServices(config, database.db, log, () => NOW, undefined);
  return { services, lines, errors: () => lines.filter((line) => line.level === 'error') };
}

/** The feed over REST, as a partner calls it. */
async function feedOver(services: Services) {
  const server = await startServer(services);
  const call = async (brandCode: string, cursor?: string, key: string = DEMO_KEYS.active): Promise<Answer> => {
    const query = `limit=5${cursor === undefined ? '' : `&cursor=${cursor}`}`;
    const answer = await server.request(`/partner/v1/brands/${brandCode}/review-changes?${query}`, { key });
    return { status: answer.status, body: answer.body as Answer['body'] };
  };
  /** Pages until caught up, every one 200; the copy it builds and its last cursor. */
  const walk = async (brandCode: string, copy = new Map<string, Review>(), from?: string) => {
    let cursor = from;
    for (let page = 0; page < 200; page++) {
      const { status, body } = await call(brandCode, cursor);
      expect(status, JSON.stringify(body)).toBe(200);
      for (const item of body.data?.items ?? []) {
        if (item.review) copy.set(item.review_id, item.review);
        else copy.delete(item.review_id);
      }
      cursor = body.data?.next_cursor;
      if (!body.data?.has_next) return { copy, cursor: cursor as string };
    }
    throw new Error('the feed did not catch up in 200 pages');
  };
  /** The review list's content, by review_id. */
  const listed = async (brandCode: string) => {
    const all = new Map<string, Review>();
    for (let page = 1; ; page++) {
      const answer = await server.request(`/partner/v1/brands/${brandCode}/reviews?page=${page}&limit=100`, {
        key: DEMO_KEYS.active,
      });
      const data = (answer.body as unknown as { data: { items: Review[]; has_next: boolean } }).data;
      for (const item of data.items) all.set(item.review_id, item);
      if (!data.has_next) return all;
    }
  };
  return { call, walk, listed };
}

const expired = { status: 410, body: expect.objectContaining({ status: 'PARTNER_API_CURSOR_EXPIRED' }) };
const invalid = { status: 400, body: expect.objectContaining({ status: 'PARTNER_API_INVALID_PARAMETER' }) };

describe('on the database of the run', () => {
  let database: DatabaseHandle;
  let on: ReturnType<typeof servicesOn>;
  let feed: Awaited<ReturnType<typeof feedOver>>;
  const newBrand = () =>
    createBrandWithReviews(database.db, { critical: [1, 2], platforms: ['BAEMIN'], reviews: SPECS });

  beforeAll(async () => {
    database = await openTestDatabase();
    on = servicesOn(database);
    feed = await feedOver(on.services);
  });

  describe('cursors the service issued, and nothing more', () => {
    it('forged, altered, truncated, another brand’s or another partner’s cursor is 400, with no error line', async () => {
      const fixture = await newBrand();
      const other = await newBrand();
      const mine = (await feed.call(fixture.brandCode)).body.data?.next_cursor as string;
      const theirs = (await feed.call('burger-town', undefined, DEMO_KEYS.other)).body.data?.next_cursor as string;
      const flipped = (text: string, at: number) =>
        `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
      const forged = Buffer.from(mine, 'base64url').fill(7).toString('base64url');
      for (const bad of [forged, flipped(mine, 5), flipped(mine, mine.length - 3), mine.slice(0, -4), 'W10']) {
        expect(await feed.call(fixture.brandCode, bad)).toMatchObject(invalid);
      }
      expect(await feed.call(other.brandCode, mine)).toMatchObject(invalid);
      expect(await feed.call(fixture.brandCode, theirs)).toMatchObject(invalid);
      expect(await feed.call(fixture.brandCode, mine)).toMatchObject({ status: 200 });
      expect(on.errors()).toEqual([]);
    });

    it('a genuine cursor ahead of the server, or of an epoch above the brand’s, is 410 with no error line', async () => {
      const fixture = await newBrand();
      const { cursor } = await feed.walk(fixture.brandCode);
      const key = await loadFeedCursorKey(database.db);
      const scope = { brandCode: fixture.brandCode, partnerId: await partnerIdOf(database, fixture.brandId) };
      const held = openFeedCursor(key, cursor, scope) as Extract<FeedPosition, { kind: 'changes' }>;
      expect(held.kind).toBe('changes');
      const ahead: FeedPosition[] = [
        { ...held, xid: held.xid + 1_000_000 },
        { ...held, epoch: held.epoch + 1 },
        {
          kind: 'walk',
          history: held.history,
          epoch: held.epoch,
          start: { xid: held.xid + 1_000_000, seq: 1 },
          after: undefined,
        },
      ];
      for (const position of ahead) {
        expect(await feed.call(fixture.brandCode, sealFeedCursor(key, position, scope))).toMatchObject(expired);
      }
      expect(on.errors()).toEqual([]);
    });

    it('a cursor shows nothing of the position it holds', async () => {
      const fixture = await newBrand();
      const { cursor } = await feed.walk(fixture.brandCode);
      const key = await loadFeedCursorKey(database.db);
      const scope = { brandCode: fixture.brandCode, partnerId: await partnerIdOf(database, fixture.brandId) };
      const held = openFeedCursor(key, cursor, scope) as Extract<FeedPosition, { kind: 'changes' }>;
      const bytes = Buffer.from(cursor, 'base64url').toString('latin1');
      expect(bytes).not.toContain(String(held.xid));
      expect(bytes).not.toContain(String(held.seq));
      expect(() => JSON.parse(bytes)).toThrow();
    });

    it('a cursor issued before cursors were sealed answers 410 once; the walk then starts again', async () => {
      const fixture = await newBrand();
      const partnerId = await partnerIdOf(database, fixture.brandId);
      const fingerprint = (await import('../routers/reviews/cursor')).fingerprintOf([fixture.brandCode, partnerId]);
      const unsealed = Buffer.from(JSON.stringify(['c', 0, 1234, 5678, fingerprint])).toString('base64url');
      expect(await feed.call(fixture.brandCode, unsealed)).toMatchObject(expired);
      const { copy } = await feed.walk(fixture.brandCode);
      expect(copy).toEqual(await feed.listed(fixture.brandCode));
    });
  });

  describe('the operator’s expire command', () => {
    it('makes every earlier cursor 410; a fresh walk answers 200 and goes on', async () => {
      const fixture = await newBrand();
      const inWalk = (await feed.call(fixture.brandCode)).body.data?.next_cursor as string;
      const { cursor: caughtUp } = await feed.walk(fixture.brandCode);
      await expireFeedCursors(database.db);
      expect(await feed.call(fixture.brandCode, inWalk)).toMatchObject(expired);
      expect(await feed.call(fixture.brandCode, caughtUp)).toMatchObject(expired);
      const { copy, cursor } = await feed.walk(fixture.brandCode);
      await database.db
        .update(reviews)
        .set({ content: 'after the expiry' })
        .where(eq(reviews.reviewCode, fixture.reviewCodes[0] ?? ''));
      await transactionsSettled(database);
      await feed.walk(fixture.brandCode, copy, cursor);
      expect(copy).toEqual(await feed.listed(fixture.brandCode));
      expect(on.errors()).toEqual([]);
    });
  });

  describe('the retention prune', () => {
    it('never strands a fresh walk, nor a cursor behind nothing pruned; a cursor behind pruned changes is 410', async () => {
      // A database of its own: every change recorded before this test's last one is past the retention.
      const pruned = await openTestDatabase();
      const own = servicesOn(pruned);
      const prunedFeed = await feedOver(own.services);
      const fixture = await createBrandWithReviews(pruned.db, {
        critical: [1, 2],
        platforms: ['BAEMIN'],
        reviews: SPECS,
      });
      const { cursor: before } = await prunedFeed.walk(fixture.brandCode);
      // Two ended transactions, the first of which noted its change last: its row has the smaller id and
      // the larger sequence. Only the second's is past the retention, with everything noted before it.
      const [first, second] = [await endedXid(pruned), await endedXid(pruned)];
      const [low, high] = await pruned.rows<{ seq: string }>(
        sql`SELECT nextval(pg_get_serial_sequence('review_changes', 'seq'))::text AS seq FROM generate_series(1, 2)`,
      );
      const [one, two] = fixture.reviewCodes;
      await pruned.db.insert(reviewChanges).values([
        { seq: Number(high?.seq), xid: first, brandId: fixture.brandId, reviewCode: one ?? '' },
        { seq: Number(low?.seq), xid: second, brandId: fixture.brandId, reviewCode: two ?? '' },
      ]);
      const retention = new Date(Date.now() - 30 * 86_400_000);
      await pruned.db
        .update(reviewChanges)
        .set({ changedAt: new Date(retention.getTime() - 86_400_000) })
        .where(sql`${reviewChanges.seq} < ${Number(high?.seq)}`);
      expect(await pruneReviewChanges(pruned.db, retention)).toBeGreaterThan(0);

      const fresh = await prunedFeed.walk(fixture.brandCode);
      expect(fresh.copy).toEqual(await prunedFeed.listed(fixture.brandCode));
      await pruned.db
        .update(reviews)
        .set({ content: 'after the prune' })
        .where(eq(reviews.reviewCode, one ?? ''));
      await transactionsSettled(pruned);
      const resumed = await prunedFeed.walk(fixture.brandCode, fresh.copy, fresh.cursor);
      expect(resumed.copy).toEqual(await prunedFeed.listed(fixture.brandCode));
      // A prune that removes nothing of the brand leaves its cursor as it was.
      await pruneReviewChanges(pruned.db, retention);
      await prunedFeed.walk(fixture.brandCode, resumed.copy, resumed.cursor);
      // Behind the pruned change: it cannot be read any more.
      expect(await prunedFeed.call(fixture.brandCode, before)).toMatchObject(expired);
      expect(own.errors()).toEqual([]);
    });
  });

  describe('what holds the feed back', () => {
    it.runIf(DRIVER === 'pglite')('is nothing on the embedded database, which has one session', async () => {
      const watch = new FeedStallWatch({ db: database.db, log: createLogger('silent'), warnSeconds: 1 });
      expect(await watch.check()).toBe(0);
    });

    it.runIf(DRIVER === 'postgres')(
      'a transaction holding an id is measured, then named in one log line once past the threshold',
      async () => {
        const url = (database as DatabaseHandle & { url: string }).url;
        const holder = postgres(url, {
          max: 1,
          onnotice: () => undefined,
          connection: { application_name: 'stall-test' },
        });
        const lines: Record<string, unknown>[] = [];
        const log = createLogger('debug', (line) => void lines.push(JSON.parse(line)));
        const watch = new FeedStallWatch({ db: database.db, log, warnSeconds: 1 });
        try {
          const held = await holder.reserve();
          await held`BEGIN`;
          const [{ pid, xid }] = (await held`SELECT pg_backend_pid() AS pid, pg_current_xact_id()::text AS xid`) as [
            { pid: number; xid: string },
          ];
          expect(await watch.check()).toBeGreaterThan(0);
          // The transaction's age passes the threshold while it is held; other test files' transactions on the
          // same server come and go, so the line that names this one is awaited.
          const ours = String(BigInt(xid) & 0xffffffffn);
          const named = () =>
            lines.filter(
              (line) => line.msg === 'review change feed held back by an open transaction' && line.xid === ours,
            );
          await eventually(
            async () => {
              await watch.check();
              return named().length;
            },
            (count) => count >= 1,
          );
          expect(named()).toHaveLength(1);
          expect(named()[0]).toMatchObject({ level: 'warn', pid, application: 'stall-test' });
          expect(Number(named()[0]?.heldSeconds)).toBeGreaterThanOrEqual(1);
          await watch.check();
          expect(named()).toHaveLength(1);
          await held`COMMIT`;
          held.release();
          // Once it ended, it holds nothing back.
          await eventually(
            () => oldestFeedHolder(database.db),
            (holder) => holder?.xid !== ours,
          );
        } finally {
          await holder.end({ timeout: 0 });
        }
      },
    );
  });
});

/** An id of a transaction that has ended. */
async function endedXid(database: DatabaseHandle): Promise<number> {
  const [row] = await database.rows<{ xid: string }>(sql`SELECT pg_current_xact_id()::text AS xid`);
  return Number(row?.xid);
}

async function partnerIdOf(database: DatabaseHandle, brandId: number): Promise<number> {
  const [row] = await database.db.select({ partnerId: brands.partnerId }).from(brands).where(eq(brands.id, brandId));
  return row?.partnerId ?? 0;
}
