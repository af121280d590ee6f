import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { reviews } from '../db/schema';
import { copyField, inBulkTransaction } from '../db/seed/bulk';
import { DRIVER, NOW, openTestDatabase } from './support/database';
import { createBrandWithReviews } from './support/factories';

// The large seed's bulk writer: COPY on PostgreSQL, inserts on PGlite. What it stores must be
// exactly what an insert of the same rows stores, and the table must keep every index it had.
let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase();
});

const indexDefinitions = (handle: DatabaseHandle) =>
  handle.rows<{ definition: string }>(
    sql`SELECT pg_get_indexdef(indexrelid) AS definition FROM pg_index WHERE indrelid = 'reviews'::regclass ORDER BY 1`,
  );

describe(`bulk seed writer on ${DRIVER}`, () => {
  it("escapes COPY's text format: null, backslash, tab, newline, carriage return", () => {
    expect(copyField(null)).toBe('\\N');
    expect(copyField('\\N')).toBe('\\\\N');
    expect(copyField('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e');
  });

  it('stores awkward text and menus exactly, and keeps every index of the table', async () => {
    const { brandId, shops } = await createBrandWithReviews(database.db, {
      critical: [1, 2],
      platforms: ['BAEMIN'],
      reviews: [],
    });
    const before = await indexDefinitions(database);
    const shopId = shops[0]?.id ?? 0;
    const rows = [
      {
        reviewCode: 'BULK0001',
        content: 'tab\there\nnew line \\N "quoted" \\ back\r',
        menus: ['콜라 1.25L', 'a,b', '{brace}', 'quote"d', 'back\\slash', 'NULL'],
        rating: 4.5,
        replyState: 'POSTED' as const,
        replyContent: '감사합니다\t!',
        replyAt: new Date('2026-01-02T03:04:05Z'),
      },
      { reviewCode: 'BULK0002', content: '', menus: null, rating: null, replyState: 'NONE' as const },
    ].map((row) => ({
      replyContent: null,
      replyAt: null,
      ...row,
      brandId,
      shopId,
      writtenAt: new Date('2026-01-01T00:00:00Z'),
      aiNegative: true,
      alertSentAt: null,
      createdAt: NOW,
    }));
    await inBulkTransaction(database.db, (_tx, write) => write(reviews, [rows.slice(0, 1), rows.slice(1)]));

    const stored = await database.db
      .select()
      .from(reviews)
      .where(eq(reviews.brandId, brandId))
      .orderBy(reviews.reviewCode);
    expect(stored.map(({ id: _id, starBucket: _s, isReplied: _r, isHandled: _h, ...row }) => row)).toEqual(rows);
    expect(await indexDefinitions(database)).toEqual(before);
  });
});
