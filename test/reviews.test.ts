import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { kstDayStart } from '../db/kst';
import { brands } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectPartnerError } from './support/errors';
import { type BrandFixture, createBrandWithReviews } from './support/factories';
import { callerFor, testServices } from './support/services';

// Reviews (partner guide § Endpoints), decisions D-5, D-7, D-8, D-9: each rule against rows built for it.
// The brand's dissatisfaction range is 1..2; shop 0 is on BAEMIN, shop 1 on NAVER.
const at = (day: string, time: string) => new Date(kstDayStart(day).getTime() + Date.parse(`1970-01-01T${time}Z`));
const REVIEWS = [
  // r0: 0.5 counts as 1 (in range: critical); a scheduled reply is NOT_REPLIED and its text is hidden
  {
    shop: 0,
    writtenAt: at('2026-01-10', '00:00:00'),
    rating: 0.5,
    content: 'Crispy 치킨',
    replyState: 'SCHEDULED',
    replyContent: 'later',
    replyAt: at('2026-01-10', '01:00:00'),
  },
  // r1: star-only, menus only hold the keyword, owner-direct reply is REPLIED with its text
  {
    shop: 0,
    writtenAt: at('2026-01-10', '23:59:59'),
    rating: 4.5,
    content: '',
    menus: ['양념치킨', '마라치킨'],
    replyState: 'OWNER_DIRECT',
    replyContent: '감사합니다',
    replyAt: at('2026-01-11', '09:00:00'),
  },
  // r2: no rating, AI negative → critical by AI alone; failed reply + alert sent → handled, not replied
  {
    shop: 1,
    writtenAt: at('2026-01-11', '00:00:00'),
    rating: null,
    content: '100% 만족 a_b',
    aiNegative: true,
    replyState: 'FAILED',
    replyContent: 'oops',
    replyAt: at('2026-01-11', '01:00:00'),
    alertSentAt: at('2026-01-11', '00:10:00'),
  },
  // r3: 5 stars but AI negative → critical; posted reply
  {
    shop: 1,
    writtenAt: at('2026-01-09', '23:59:59'),
    rating: 5,
    content: 'CRISPY',
    aiNegative: true,
    replyState: 'POSTED',
    replyContent: '죄송합니다',
    replyAt: at('2026-01-10', '08:00:00'),
  },
  // r4: 2 stars → critical; decoys for wildcard bugs ('axb' for a_b, '1000원' for 00%)
  { shop: 0, writtenAt: at('2026-01-10', '12:00:00'), rating: 2, content: 'axb 1000원' },
  // r5: same instant as r4 and r6 (tie broken by review_id desc); backslash literal; alert without reply
  {
    shop: 1,
    writtenAt: at('2026-01-10', '12:00:00'),
    rating: 1,
    content: '맛\\양',
    menus: ['콜라'],
    alertSentAt: at('2026-01-10', '12:05:00'),
  },
  // r6: 3 stars, outside the range, not judged negative → not critical
  { shop: 0, writtenAt: at('2026-01-10', '12:00:00'), rating: 3, content: 'plain' },
] as const;

let fixture: BrandFixture;
let api: ReturnType<typeof callerFor>;
let services: ReturnType<typeof testServices>;
let database: Awaited<ReturnType<typeof openTestDatabase>>;

beforeAll(async () => {
  database = await openTestDatabase();
  fixture = await createBrandWithReviews(database.db, {
    critical: [1, 2],
    platforms: ['BAEMIN', 'NAVER'],
    reviews: REVIEWS.map((review) => ({ ...review, menus: 'menus' in review ? [...review.menus] : null })),
  });
  services = testServices(database.db);
  api = callerFor(services, DEMO_KEYS.active);
});

type Filters = Omit<Parameters<typeof api.reviews.list>[0], 'brand_code'>;

/** The review numbers (index in REVIEWS) a filter returns, in the API's order. */
async function returned(filters: Filters = {}) {
  const { data } = await api.reviews.list({ brand_code: fixture.brandCode, limit: 100, ...filters });
  return data.items.map((review) => fixture.reviewCodes.indexOf(review.review_id));
}

describe('order and dates', () => {
  it('is newest first, ties by review_id descending (D-9)', async () => {
    expect(await returned()).toEqual([2, 1, 6, 5, 4, 0, 3]);
  });

  it('reads from/to as inclusive KST days on the written time (00:00:00 and 23:59:59 are inside)', async () => {
    expect(await returned({ from: '2026-01-10', to: '2026-01-10' })).toEqual([1, 6, 5, 4, 0]);
    expect(await returned({ to: '2026-01-09' })).toEqual([3]);
    expect(await returned({ from: '2026-01-11' })).toEqual([2]);
  });

  it('writes dates as KST timestamps', async () => {
    const { data } = await api.reviews.list({ brand_code: fixture.brandCode, from: '2026-01-11' });
    expect(data.items[0]?.date).toBe('2026-01-11T00:00:00+09:00');
  });
});

describe('rating bounds (D-7: 0.5 counts as 1)', () => {
  it.each<[Filters, number[]]>([
    [{ rating_min: 1 }, [1, 6, 5, 4, 0, 3]], // a review without rating counts as 0
    [{ rating_max: 0 }, [2]], // only reviews without rating
    [{ rating_min: 4 }, [1, 3]], // 4.5 compares as 4
    [{ rating_min: 4.5 }, [3]], // …so it is not ≥ 4.5
    [{ rating_max: 1 }, [2, 5, 0]], // 0.5 is treated as 1
    [{ rating_min: 2, rating_max: 3 }, [6, 4]],
    [{ rating_min: 0, rating_max: 5 }, [2, 1, 6, 5, 4, 0, 3]],
  ])('%j → %j', async (filters, expected) => {
    expect(await returned(filters)).toEqual(expected);
  });
});

describe('is_critical (D-7)', () => {
  it('is the star range OR the AI judgement, and the filter uses the same rule', async () => {
    const { data } = await api.reviews.list({ brand_code: fixture.brandCode, limit: 100 });
    const critical = data.items
      .filter((review) => review.is_critical)
      .map((review) => fixture.reviewCodes.indexOf(review.review_id));
    expect(critical.sort()).toEqual([0, 2, 3, 4, 5]);
    expect(await returned({ critical: true })).toEqual([2, 5, 4, 0, 3]);
    expect(await returned({ critical: false })).toEqual([1, 6]);
  });

  it("follows a change of the brand's range with the brand list (at most 1 s old, D-23)", async () => {
    await database.db
      .update(brands)
      .set({ criticalStarMin: 3, criticalStarMax: 3 })
      .where(eq(brands.id, fixture.brandId));
    // The next load of the brand list carries the new range, whichever server the call then reads.
    await services.cache.caughtUp();
    try {
      expect(await returned({ critical: true })).toEqual([2, 6, 3]); // 3 stars, and the two AI-negative ones
    } finally {
      await database.db
        .update(brands)
        .set({ criticalStarMin: 1, criticalStarMax: 2 })
        .where(eq(brands.id, fixture.brandId));
      await services.cache.caughtUp();
    }
  });
});

describe('replies and handling (D-7)', () => {
  it('shows owner-direct and posted replies as REPLIED with their text and time', async () => {
    const { data } = await api.reviews.list({ brand_code: fixture.brandCode, replied: true });
    expect(data.items.map((review) => [review.reply_status, review.reply_content, review.reply_date])).toEqual([
      ['REPLIED', '감사합니다', '2026-01-11T09:00:00+09:00'],
      ['REPLIED', '죄송합니다', '2026-01-10T08:00:00+09:00'],
    ]);
  });

  it('shows scheduled and failed replies as NOT_REPLIED with null text and date', async () => {
    const { data } = await api.reviews.list({ brand_code: fixture.brandCode, replied: false, limit: 100 });
    expect(data.items.map((review) => fixture.reviewCodes.indexOf(review.review_id))).toEqual([2, 6, 5, 4, 0]);
    for (const review of data.items) {
      expect([review.reply_status, review.reply_content, review.reply_date]).toEqual(['NOT_REPLIED', null, null]);
    }
  });

  it('is_handled = replied OR alert sent, and the filter agrees', async () => {
    expect(await returned({ handled: true })).toEqual([2, 1, 5, 3]);
    expect(await returned({ handled: false })).toEqual([6, 4, 0]);
    expect(await returned({ handled: true, replied: false })).toEqual([2, 5]); // alert sent without reply
  });
});

describe('keyword (partner guide § List reviews of a brand, D-8)', () => {
  it.each<[string, number[]]>([
    ['crispy', [0, 3]], // case-insensitive
    ['마라', [1]], // found only in a menu name
    ['콜라', [5]],
    ['%', [2]], // literal, not a wildcard
    ['00%', [2]], // not '1000원'
    ['_', [2]],
    ['a_b', [2]], // not 'axb'
    ['\\', [5]],
    ['치킨\n마라', []], // a match may not span two menu names
    ['없는말', []],
    // one and two characters: found through the brand's character-pair index (migrations 0005, 0012), same rules
    ['cR', [0, 3]],
    ['C', [0, 3]],
    ['라', [1, 5]], // only in menu names
    ['%', [2]],
    ['킨마', []], // a pair may not span two menu names
    ['뷁', []],
  ])('%j → %j', async (keyword, expected) => {
    expect(await returned({ keyword })).toEqual(expected);
  });

  it("finds a keyword of any length in the read brand's reviews only, the same text in another brand's aside", async () => {
    const other = await createBrandWithReviews(database.db, {
      critical: [1, 2],
      platforms: ['BAEMIN'],
      reviews: [{ shop: 0, writtenAt: at('2026-01-10', '06:00:00'), content: 'Crispy 치킨', menus: ['마라치킨'] }],
    });
    const otherReturned = async (keyword: string) => {
      const { data } = await api.reviews.list({ brand_code: other.brandCode, limit: 100, keyword });
      return data.items.map((review) => other.reviewCodes.indexOf(review.review_id));
    };
    for (const [keyword, own] of [
      ['cR', [0, 3]],
      ['라', [1, 5]],
      ['crispy', [0, 3]],
    ] as const) {
      expect(await returned({ keyword }), keyword).toEqual(own);
      expect(await otherReturned(keyword), keyword).toEqual([0]);
    }
  });

  it('combines with the other filters', async () => {
    expect(await returned({ keyword: 'crispy', critical: true, platform: 'NAVER' })).toEqual([3]);
    expect(await returned({ platform_shop_id: fixture.shops[1]?.platformShopId })).toEqual([2, 5, 3]);
    expect(await returned({ platform: 'BAEMIN', handled: false })).toEqual([6, 4, 0]);
  });
});

describe('fields (partner guide § Get one review)', () => {
  it('returns exactly the documented fields, star-only content "" and menus null when none', async () => {
    const { data } = await api.reviews.list({ brand_code: fixture.brandCode, limit: 100 });
    for (const review of data.items) {
      expect(Object.keys(review)).toEqual([
        'review_id',
        'platform_shop_id',
        'shop_name',
        'platform',
        'date',
        'content',
        'rating',
        'menus',
        'reply_status',
        'reply_content',
        'reply_date',
        'is_critical',
        'is_handled',
      ]);
    }
    const byIndex = (index: number) => data.items.find((review) => review.review_id === fixture.reviewCodes[index]);
    expect(byIndex(1)).toMatchObject({ content: '', rating: 4.5, menus: ['양념치킨', '마라치킨'], platform: 'BAEMIN' });
    expect(byIndex(2)).toMatchObject({
      rating: null,
      menus: null,
      is_critical: true,
      is_handled: true,
      platform: 'NAVER',
    });
  });
});

describe('single review (partner guide § Get one review)', () => {
  it('is identical to its item in the list', async () => {
    const { data } = await api.reviews.list({ brand_code: fixture.brandCode, limit: 100 });
    for (const review of data.items) {
      expect((await api.reviews.get({ brand_code: fixture.brandCode, review_id: review.review_id })).data).toEqual(
        review,
      );
    }
  });

  it('is 404 PARTNER_API_REVIEW_NOT_FOUND when missing or of another brand', async () => {
    await expectPartnerError(
      api.reviews.get({ brand_code: fixture.brandCode, review_id: 'R999999999' }),
      'PARTNER_API_REVIEW_NOT_FOUND',
    );
    const demo = (await api.reviews.list({ brand_code: DEMO_BRAND, limit: 1 })).data.items[0];
    if (!demo) throw new Error('demo data has no review');
    await expectPartnerError(
      api.reviews.get({ brand_code: fixture.brandCode, review_id: demo.review_id }),
      'PARTNER_API_REVIEW_NOT_FOUND',
    );
    expect((await api.reviews.get({ brand_code: DEMO_BRAND, review_id: demo.review_id })).data).toEqual(demo);
  });
});

describe('on the demo data', () => {
  it('finds "마라" only through menus, and pages without skipping or repeating', async () => {
    const seen = new Set<string>();
    let previous: { date: string; review_id: string } | undefined;
    for (let page = 1; ; page++) {
      const { data } = await api.reviews.list({ brand_code: DEMO_BRAND, keyword: '마라', page, limit: 37 });
      for (const review of data.items) {
        expect(review.content).not.toContain('마라');
        expect(review.menus?.some((menu) => menu.includes('마라'))).toBe(true);
        expect(seen.has(review.review_id)).toBe(false);
        seen.add(review.review_id);
        if (previous) {
          const newer =
            previous.date > review.date || (previous.date === review.date && previous.review_id > review.review_id);
          expect(newer).toBe(true);
        }
        previous = review;
      }
      if (!data.has_next) break;
    }
    expect(seen.size).toBeGreaterThan(10);
  });
});
