import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { kstDayStart } from '../db/kst';
import { pruneReviewChanges } from '../db/queries/review-changes';
import { brands, reviews, shops } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { makeDemoChanges } from '../db/seed/demo-changes';
import { createCaller } from '../routers';
import { createRequestContext } from '../server/trpc/context';
import type { Services } from '../server/trpc/services';
import { DRIVER, openTestDatabase, transactionsSettled } from './support/database';
import { expectPartnerError } from './support/errors';
import { type BrandFixture, createBrandWithReviews, type ReviewSpec } from './support/factories';
import { startServer, testServices } from './support/services';

// The review change feed (partner guide § Keeping a copy in sync, D-26): a copy built by applying the items
// in order equals the review list, whatever is written while it is walked; 410 when a walk can no longer be
// served; 400 for a cursor that is not this brand's.

const FIRST = kstDayStart('2026-05-01').getTime();
const SPECS: ReviewSpec[] = Array.from({ length: 45 }, (_, index) => ({
  shop: index % 2,
  // Many in the same second: the walk's page boundaries fall inside ties.
  writtenAt: new Date(FIRST + Math.floor(index / 4) * 600_000),
  content: `review ${index}`,
  rating: (index % 5) + 1,
}));

let database: DatabaseHandle & { url?: string };
let services: Services;

beforeAll(async () => {
  database = await openTestDatabase();
  services = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1000000' });
});

const newBrand = (specs: ReviewSpec[] = SPECS) =>
  createBrandWithReviews(database.db, { critical: [1, 2], platforms: ['BAEMIN', 'NAVER'], reviews: specs });

type Review = { review_id: string } & Record<string, unknown>;
type FeedData = {
  items: { review_id: string; change: 'UPSERT' | 'DELETE'; review: Review | null }[];
  limit: number;
  has_next: boolean;
  next_cursor: string;
};

function caller(apiKey: string = DEMO_KEYS.active) {
  const ctx = createRequestContext(services, { apiKey });
  return { ctx, api: createCaller(ctx) };
}

async function changes(brandCode: string, cursor?: string, limit = 10) {
  const { ctx, api } = caller();
  const { data } = await api.reviews.changes({ brand_code: brandCode, cursor, limit });
  return { data: data as FeedData, link: ctx.responseHeaders.Link };
}

/** The review list's whole content, by review_id: what a copy must equal. */
async function listed(brandCode: string): Promise<Map<string, Review>> {
  const { api } = caller();
  const all = new Map<string, Review>();
  for (let page = 1; ; page++) {
    const { data } = await api.reviews.list({ brand_code: brandCode, page, limit: 100 });
    for (const item of data.items) all.set(item.review_id, item as Review);
    if (!data.has_next) return all;
  }
}

/** A partner's copy: UPSERT replaces, DELETE removes. */
function apply(copy: Map<string, Review>, data: FeedData) {
  for (const item of data.items) {
    if (item.change === 'UPSERT' && item.review) copy.set(item.review_id, item.review);
    else copy.delete(item.review_id);
  }
}

/**
 * Pages until caught up, applying each; `between` runs after each page (writes while the walk goes on).
 * Caught up, it waits for the server's transactions begun until then to end and reads once more, unless
 * `settle` is false (a transaction held open on purpose).
 */
async function follow(
  brandCode: string,
  copy: Map<string, Review>,
  cursor?: string,
  between?: (page: number) => Promise<void>,
  settle = true,
) {
  let position = cursor;
  let settled = !settle;
  for (let page = 0; page < 500; page++) {
    const { data } = await changes(brandCode, position);
    apply(copy, data);
    position = data.next_cursor;
    if (!data.has_next && settled) return position;
    if (!data.has_next) {
      await transactionsSettled(database);
      settled = true;
      continue;
    }
    if (!between) continue;
    await between(page);
    // Writes made after a settle need one of their own before the walk may end.
    settled = !settle;
  }
  throw new Error('the feed did not catch up in 500 pages');
}

const codes = (fixture: BrandFixture) => fixture.reviewCodes;

describe('a walk of the feed builds a copy equal to the review list', () => {
  it('from empty: every review, as the single-review endpoint returns it', async () => {
    const fixture = await newBrand();
    const copy = new Map<string, Review>();
    await follow(fixture.brandCode, copy);
    expect(copy).toEqual(await listed(fixture.brandCode));
    expect(copy.size).toBe(SPECS.length);
    const { api } = caller();
    const one = codes(fixture)[7] ?? '';
    const { data } = await api.reviews.get({ brand_code: fixture.brandCode, review_id: one });
    expect(copy.get(one)).toEqual(data);
  });

  it('with every kind of write between its pages, in the first read and after it', async () => {
    const fixture = await newBrand();
    const [first, second, third, fourth, fifth] = codes(fixture);
    const shop = fixture.shops[0]?.id ?? 0;
    const db = database.db;
    let added = 0;
    const writes = [
      // A review written before the walk's position (already passed in the list's order), and a new one.
      () => insertReview(fixture, shop, new Date(FIRST - 86_400_000), `late-${added++}`),
      () => insertReview(fixture, shop, new Date(FIRST + 86_400_000), `new-${added++}`),
      () =>
        db
          .update(reviews)
          .set({ replyState: 'POSTED', replyContent: '감사합니다', replyAt: new Date(FIRST + 3_600_000) })
          .where(eq(reviews.reviewCode, first ?? '')),
      () =>
        db
          .update(reviews)
          .set({ alertSentAt: new Date(FIRST + 7_200_000) })
          .where(eq(reviews.reviewCode, second ?? '')),
      () => db.delete(reviews).where(eq(reviews.reviewCode, third ?? '')),
      () =>
        db
          .update(reviews)
          .set({ aiNegative: true })
          .where(eq(reviews.reviewCode, fourth ?? '')),
      // The review moves in the list's order: it must not be lost between pages.
      () =>
        db
          .update(reviews)
          .set({ writtenAt: new Date(FIRST + 40 * 600_000) })
          .where(eq(reviews.reviewCode, fifth ?? '')),
      // A field the reviews carry from their shop.
      () => db.update(shops).set({ name: '새 이름' }).where(eq(shops.id, shop)),
    ];
    const copy = new Map<string, Review>();
    const cursor = await follow(fixture.brandCode, copy, undefined, async (page) => {
      await writes[page % writes.length]?.();
    });
    expect(copy).toEqual(await listed(fixture.brandCode));

    // After it caught up: more writes, then the walk resumes from its cursor.
    await db
      .update(reviews)
      .set({ replyState: 'OWNER_DIRECT', replyContent: '사장님 댓글' })
      .where(eq(reviews.reviewCode, second ?? ''));
    await db.delete(reviews).where(eq(reviews.reviewCode, fourth ?? ''));
    await insertReview(fixture, shop, new Date(FIRST), `after-${added++}`);
    await db
      .update(shops)
      .set({ platformShopId: 'renamed-1' })
      .where(eq(shops.id, fixture.shops[1]?.id ?? 0));
    await follow(fixture.brandCode, copy, cursor);
    expect(copy).toEqual(await listed(fixture.brandCode));
  });

  it('sends a DELETE for a removed review, and nothing new keeps the cursor as sent', async () => {
    const fixture = await newBrand(SPECS.slice(0, 3));
    const cursor = await follow(fixture.brandCode, new Map());
    const idle = await changes(fixture.brandCode, cursor);
    expect(idle.data).toEqual({ items: [], limit: 10, has_next: false, next_cursor: cursor });
    expect(idle.link).toBeUndefined();

    const gone = codes(fixture)[1] ?? '';
    await database.db.delete(reviews).where(eq(reviews.reviewCode, gone));
    // The feed shows a change once every transaction begun before it has ended, other files' too (D-26).
    await transactionsSettled(database);
    const { data } = await changes(fixture.brandCode, cursor);
    expect(data.items).toEqual([{ review_id: gone, change: 'DELETE', review: null }]);
    expect(data.next_cursor).not.toBe(cursor);
  });

  it('sends a DELETE to the brand a review left and an UPSERT to the one it joined; nothing for a write that changes nothing', async () => {
    const [left, joined] = [await newBrand(SPECS.slice(0, 2)), await newBrand(SPECS.slice(0, 1))];
    const [leftCursor, joinedCursor] = [
      await follow(left.brandCode, new Map()),
      await follow(joined.brandCode, new Map()),
    ];
    const [moved, kept] = codes(left);
    await database.db
      .update(reviews)
      .set({ brandId: joined.brandId, shopId: joined.shops[0]?.id })
      .where(eq(reviews.reviewCode, moved ?? ''));
    await database.db
      .update(reviews)
      .set({ content: sql`${reviews.content}` })
      .where(eq(reviews.reviewCode, kept ?? ''));
    await transactionsSettled(database);

    expect((await changes(left.brandCode, leftCursor)).data.items).toEqual([
      { review_id: moved, change: 'DELETE', review: null },
    ]);
    const { data } = await changes(joined.brandCode, joinedCursor);
    expect(data.items.map((item) => [item.review_id, item.change, item.review?.shop_name])).toEqual([
      [moved, 'UPSERT', joined.shops[0]?.name],
    ]);
  });

  it('sends a change of one review once per page, where it was last changed', async () => {
    const fixture = await newBrand(SPECS.slice(0, 2));
    const cursor = await follow(fixture.brandCode, new Map());
    const [one, two] = codes(fixture);
    for (const content of ['a', 'b', 'c']) {
      await database.db
        .update(reviews)
        .set({ content })
        .where(eq(reviews.reviewCode, one ?? ''));
    }
    await database.db
      .update(reviews)
      .set({ content: 'z' })
      .where(eq(reviews.reviewCode, two ?? ''));
    await transactionsSettled(database);
    const { data } = await changes(fixture.brandCode, cursor);
    expect(data.items.map((item) => [item.review_id, item.review?.content])).toEqual([
      [one, 'c'],
      [two, 'z'],
    ]);
  });

  it('pages with limit, a Link to the next page while has_next, and limit over 100 is 400', async () => {
    const fixture = await newBrand();
    const { data, link } = await changes(fixture.brandCode, undefined, 20);
    expect(data.items).toHaveLength(20);
    expect(data.has_next).toBe(true);
    expect(link).toBe(
      `</partner/v1/brands/${fixture.brandCode}/review-changes?limit=20&cursor=${data.next_cursor}>; rel="next"`,
    );
    await expectPartnerError(
      caller().api.reviews.changes({ brand_code: fixture.brandCode, limit: 101 }),
      'PARTNER_API_INVALID_PARAMETER',
    );
  });

  it('answers over REST at its path, with the Link header', async () => {
    const fixture = await newBrand(SPECS.slice(0, 5));
    const server = await startServer(services);
    const path = `/partner/v1/brands/${fixture.brandCode}/review-changes`;
    const first = await server.request(`${path}?limit=2`, { key: DEMO_KEYS.active });
    expect(first.status).toBe(200);
    const data = (first.body as unknown as { data: FeedData }).data;
    expect(data.items).toHaveLength(2);
    expect(first.headers.get('link')).toBe(`<${path}?limit=2&cursor=${data.next_cursor}>; rel="next"`);
    const next = await server.request(`${path}?limit=2&cursor=${data.next_cursor}`, { key: DEMO_KEYS.active });
    expect((next.body as unknown as { data: FeedData }).data.items).toHaveLength(2);
  });
});

describe('a walk that can no longer be served is 410 PARTNER_API_CURSOR_EXPIRED', () => {
  it('after a change of the brand dissatisfaction range, in the first read and after it', async () => {
    const fixture = await newBrand();
    const inWalk = (await changes(fixture.brandCode)).data.next_cursor;
    const caughtUp = await follow(fixture.brandCode, new Map());
    await database.db.update(brands).set({ criticalStarMax: 3 }).where(eq(brands.id, fixture.brandId));
    for (const cursor of [inWalk, caughtUp]) {
      await expectPartnerError(
        caller().api.reviews.changes({ brand_code: fixture.brandCode, cursor }),
        'PARTNER_API_CURSOR_EXPIRED',
      );
    }
    // A new walk reads is_critical by the new range (the list, once its brand cache has it).
    await services.cache.caughtUp();
    const copy = new Map<string, Review>();
    await follow(fixture.brandCode, copy);
    expect(copy).toEqual(await listed(fixture.brandCode));
  });

  it('after changes it had not read were pruned, and not when none of its brand were', async () => {
    const fixture = await newBrand(SPECS.slice(0, 3));
    const quiet = await newBrand(SPECS.slice(0, 3));
    const cursor = await follow(fixture.brandCode, new Map());
    const quietCursor = await follow(quiet.brandCode, new Map());
    await database.db
      .update(reviews)
      .set({ content: 'changed' })
      .where(eq(reviews.reviewCode, codes(fixture)[0] ?? ''));
    // Every change recorded so far is past the retention, and below the horizon once every transaction of
    // the server begun before it ended: a prune marks nothing an open transaction could still write behind.
    await transactionsSettled(database);
    expect(await pruneReviewChanges(database.db, new Date(Date.now() + 60_000))).toBeGreaterThan(0);
    await expectPartnerError(
      caller().api.reviews.changes({ brand_code: fixture.brandCode, cursor }),
      'PARTNER_API_CURSOR_EXPIRED',
    );
    const { data } = await changes(quiet.brandCode, quietCursor);
    expect(data).toMatchObject({ items: [], next_cursor: quietCursor });
  });
});

describe('a cursor that is not this brand’s is 400 PARTNER_API_INVALID_PARAMETER', () => {
  it('malformed, tampered, of another brand, or of another partner', async () => {
    const fixture = await newBrand(SPECS.slice(0, 3));
    const other = await newBrand(SPECS.slice(0, 3));
    const cursor = (await changes(fixture.brandCode, undefined, 1)).data.next_cursor;
    const tampered = `${cursor.slice(0, 20)}${cursor[20] === 'A' ? 'B' : 'A'}${cursor.slice(21)}`;
    for (const bad of ['not a cursor', `${cursor}A`, tampered, 'W10']) {
      await expectPartnerError(
        caller().api.reviews.changes({ brand_code: fixture.brandCode, cursor: bad }),
        'PARTNER_API_INVALID_PARAMETER',
      );
    }
    await expectPartnerError(
      caller().api.reviews.changes({ brand_code: other.brandCode, cursor }),
      'PARTNER_API_INVALID_PARAMETER',
    );
  });
});

describe.runIf(DRIVER === 'postgres')('on PostgreSQL, with concurrent writers', () => {
  it('skips nothing: writers insert, reply, alert and delete while one transaction stays open across the walk', async () => {
    const fixture = await newBrand();
    const shop = fixture.shops[1]?.id ?? 0;
    const writer = postgres(database.url ?? '', { max: 4, onnotice: () => undefined });
    try {
      // The held transaction writes first (the smaller transaction id) and commits last.
      const held = writer.reserve();
      const heldSql = await held;
      await heldSql`BEGIN`;
      await heldSql`INSERT INTO reviews (review_code, brand_id, shop_id, written_at, content)
        VALUES (${`held-${fixture.brandCode}`}, ${fixture.brandId}, ${shop}, ${new Date(FIRST)}, 'held')`;
      await heldSql`UPDATE reviews SET content = 'held edit' WHERE review_code = ${codes(fixture)[2] ?? ''}`;

      let written = 0;
      // Not the review the held transaction has locked: the writers would wait for it.
      const targets = codes(fixture).filter((_, index) => index !== 2);
      const writers = Array.from({ length: 3 }, async (_, lane) => {
        for (let step = 0; step < 40; step++) {
          const code = `w${lane}-${step}-${fixture.brandCode}`.slice(0, 64);
          await writer`INSERT INTO reviews (review_code, brand_id, shop_id, written_at, content, rating)
            VALUES (${code}, ${fixture.brandId}, ${shop}, ${new Date(FIRST + step * 1000)}, ${`lane ${lane}`}, ${(step % 5) + 1})`;
          const target = targets[(lane * 7 + step) % targets.length] ?? '';
          if (step % 3 === 0)
            await writer`UPDATE reviews SET reply_state = 'POSTED', reply_content = ${`r${step}`}, reply_at = now() WHERE review_code = ${target}`;
          if (step % 3 === 1) await writer`UPDATE reviews SET alert_sent_at = now() WHERE review_code = ${target}`;
          if (step % 4 === 3) await writer`DELETE FROM reviews WHERE review_code = ${code}`;
          written++;
        }
      });

      const copy = new Map<string, Review>();
      const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 5));
      const cursor = await follow(fixture.brandCode, copy, undefined, pause, false);
      await Promise.all(writers);
      expect(written).toBe(120);
      // Caught up while the held transaction is open: its writes must still be ahead of the cursor.
      const resumed = await follow(fixture.brandCode, copy, cursor, undefined, false);
      await heldSql`COMMIT`;
      heldSql.release();

      await follow(fixture.brandCode, copy, resumed);
      const list = await listed(fixture.brandCode);
      expect(list.get(`held-${fixture.brandCode}`)).toBeDefined();
      expect(copy).toEqual(list);
    } finally {
      await writer.end({ timeout: 0 });
    }
  });
});

describe('npm run demo:changes', () => {
  it('makes one change of each kind, which a walk started before reads', async () => {
    const cursor = await follow('chicken-house', new Map(), undefined);
    const made = await makeDemoChanges(database.db);
    await transactionsSettled(database);
    const { data } = await changes('chicken-house', cursor, 100);
    const seen = Object.fromEntries(data.items.map((item) => [item.review_id, item]));
    expect(seen[made.replied]?.review).toMatchObject({ reply_status: 'REPLIED', is_handled: true });
    expect(seen[made.alerted]?.review).toMatchObject({ reply_status: 'NOT_REPLIED', is_handled: true });
    expect(seen[made.added]?.change).toBe('UPSERT');
    expect(seen[made.critical]?.review).toMatchObject({ rating: 1, is_critical: true });
    expect(seen[made.removed]).toEqual({ review_id: made.removed, change: 'DELETE', review: null });
  });
});

describe('the partner guide § Keeping a copy in sync', () => {
  const tools = ['bash', 'curl', 'jq'].filter((tool) => spawnSync('which', [tool]).status !== 0);
  it.skipIf(tools.length > 0)(
    `runs each shell example against the server${tools.length ? ` (no ${tools.join(', ')})` : ''}`,
    async () => {
      const guide = readFileSync(path.join(import.meta.dirname, '../docs/partner-guide.md'), 'utf8');
      const section = guide.slice(guide.indexOf('## Keeping a copy in sync'), guide.indexOf('## Clients'));
      const examples = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
      expect(examples.length).toBeGreaterThanOrEqual(3);
      const server = await startServer(services);
      const dir = mkdtempSync(path.join(tmpdir(), 'guide-sync-'));
      const outputs: string[] = [];
      try {
        for (const example of examples) {
          const env = {
            ...process.env,
            KEY: `x-partner-api-key: ${DEMO_KEYS.active}`,
            API: `${server.base}/partner/v1`,
          };
          // Asynchronous: the server answering the examples runs in this process.
          const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
            const child = spawn('bash', ['-eo', 'pipefail', '-c', example], { cwd: dir, env });
            let output = '';
            child.stdout.on('data', (chunk) => (output += chunk));
            child.stderr.on('data', (chunk) => (output += chunk));
            child.on('close', (exitCode) => resolve({ code: exitCode, output }));
          });
          expect(code, `${example}\n${output}`).toBe(0);
          expect(output, example).not.toMatch(/PARTNER_API_|null/);
          outputs.push(output);
        }
        // The loop saved the cursor of its last page; the conditional poll of statistics answered 304.
        expect(readFileSync(path.join(dir, 'cursor.txt'), 'utf8').trim()).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(outputs.join('')).toMatch(/^304$/m);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('TRUNCATE of the reviews', () => {
  it('answers 410 to every cursor', async () => {
    const fixture = await newBrand(SPECS.slice(0, 3));
    const cursor = await follow(fixture.brandCode, new Map());
    await database.db.execute(sql`TRUNCATE reviews CASCADE`);
    await expectPartnerError(
      caller().api.reviews.changes({ brand_code: fixture.brandCode, cursor }),
      'PARTNER_API_CURSOR_EXPIRED',
    );
    expect((await changes(fixture.brandCode)).data.items).toEqual([]);
  });
});

async function insertReview(fixture: BrandFixture, shopId: number, writtenAt: Date, suffix: string) {
  await database.db.insert(reviews).values({
    reviewCode: `${fixture.reviewCodes[0]}${suffix}`.slice(0, 64),
    brandId: fixture.brandId,
    shopId,
    writtenAt,
    content: suffix,
    rating: 2,
  });
}
