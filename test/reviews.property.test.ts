import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { addDays, kstDay, kstDayStart } from '../db/kst';
import { DEMO_KEYS } from '../db/seed/demo';
import { createCaller } from '../routers';
import { createRequestContext } from '../server/trpc/context';
import type { Services } from '../server/trpc/services';
import { DRIVER, openTestDatabase } from './support/database';
import { type BrandFixture, createBrandWithReviews, type ReviewSpec } from './support/factories';
import { callerFor, testServices } from './support/services';

// Random filter combinations over generated reviews give exactly what an in-memory oracle of the contract's
// rules gives (D-7, D-8, D-9). The oracle is written from the partner guide, not from the SQL.

const PLATFORMS = ['BAEMIN', 'NAVER', 'CPEATS'] as const;
const WORDS = ['맛있', 'Crispy', 'CRISPY', '100%', 'a_b', 'axb', '짜요', '\\n', '치킨', '', '마라'];
const MENUS = ['양념치킨', '마라치킨', '콜라', 'Fries', '치즈볼'];
const FIRST_DAY = '2026-03-01';
const DAYS = 6;

const reviewArbitrary = fc.record({
  shop: fc.integer({ min: 0, max: PLATFORMS.length - 1 }),
  // whole seconds over a few days, with collisions likely (ties broken by review_id)
  second: fc.oneof(fc.integer({ min: 0, max: DAYS * 86_400 - 1 }), fc.constantFrom(0, 86_399, 86_400, 43_200)),
  rating: fc.option(
    fc.integer({ min: 1, max: 10 }).map((halves) => halves / 2),
    { nil: null },
  ),
  words: fc.array(fc.constantFrom(...WORDS), { maxLength: 3 }),
  menus: fc.option(fc.uniqueArray(fc.constantFrom(...MENUS), { minLength: 1, maxLength: 3 }), { nil: null }),
  aiNegative: fc.boolean(),
  replyState: fc.constantFrom('NONE', 'POSTED', 'OWNER_DIRECT', 'SCHEDULED', 'FAILED' as const),
  alert: fc.boolean(),
});

/** One fixed set of 80 reviews (seeded), so a failure reproduces. */
function sample() {
  return (
    fc.sample(fc.array(reviewArbitrary, { minLength: 80, maxLength: 80 }), { numRuns: 1, seed: 20261122 })[0] ?? []
  );
}

const dayArbitrary = fc.integer({ min: -1, max: DAYS }).map((offset) => addDays(FIRST_DAY, offset));
const filtersArbitrary = fc.record(
  {
    from: dayArbitrary,
    to: dayArbitrary,
    platform: fc.constantFrom(...PLATFORMS),
    rating_min: fc.constantFrom(0, 0.5, 1, 2, 3.5, 4, 4.5, 5),
    rating_max: fc.constantFrom(0, 0.5, 1, 2.5, 3, 4, 5),
    replied: fc.boolean(),
    critical: fc.boolean(),
    handled: fc.boolean(),
    keyword: fc.constantFrom('crispy', '%', '_', 'a_b', '마라', '치킨', 'fries', '\\', '맛', 'x'),
  },
  { requiredKeys: [] },
);

let generated: ReturnType<typeof sample>;
let fixture: BrandFixture;
let api: ReturnType<typeof callerFor>;
let services: Services;
const CRITICAL: [number, number] = [1, 2];

beforeAll(async () => {
  const database = await openTestDatabase();
  generated = sample();
  const specs: ReviewSpec[] = generated.map((review) => {
    const writtenAt = new Date(kstDayStart(FIRST_DAY).getTime() + review.second * 1000);
    const replies = review.replyState !== 'NONE';
    return {
      shop: review.shop,
      writtenAt,
      content: review.words.join(' '),
      rating: review.rating,
      menus: review.menus,
      aiNegative: review.aiNegative,
      replyState: review.replyState,
      replyContent: replies ? '답글' : null,
      replyAt: replies ? new Date(writtenAt.getTime() + 3_600_000) : null,
      alertSentAt: review.alert ? new Date(writtenAt.getTime() + 60_000) : null,
    };
  });
  fixture = await createBrandWithReviews(database.db, {
    critical: CRITICAL,
    platforms: [...PLATFORMS],
    reviews: specs,
  });
  // Hundreds of calls in seconds: the limit is not under test here.
  services = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1000000' });
  api = callerFor(services, DEMO_KEYS.active);
});

/** The contract's rules, stated directly. */
function oracle(filters: Record<string, string | number | boolean | undefined>) {
  const bucket = (rating: number | null) => (rating === null ? 0 : rating < 1 ? 1 : Math.floor(rating));
  return generated
    .map((review, index) => {
      const writtenAt = new Date(kstDayStart(FIRST_DAY).getTime() + review.second * 1000);
      const replied = review.replyState === 'POSTED' || review.replyState === 'OWNER_DIRECT';
      const content = review.words.join(' ');
      return {
        index,
        code: fixture.reviewCodes[index] ?? '',
        writtenAt,
        day: kstDay(writtenAt),
        platform: PLATFORMS[review.shop],
        bucket: bucket(review.rating),
        critical: (bucket(review.rating) >= CRITICAL[0] && bucket(review.rating) <= CRITICAL[1]) || review.aiNegative,
        replied,
        handled: replied || review.alert,
        text: [content, ...(review.menus ?? [])].map((part) => part.toLowerCase()),
      };
    })
    .filter((review) => {
      const f = filters;
      if (f.from !== undefined && review.day < String(f.from)) return false;
      if (f.to !== undefined && review.day > String(f.to)) return false;
      if (f.platform !== undefined && review.platform !== f.platform) return false;
      if (f.rating_min !== undefined && review.bucket < Number(f.rating_min)) return false;
      if (f.rating_max !== undefined && review.bucket > Number(f.rating_max)) return false;
      if (f.replied !== undefined && review.replied !== f.replied) return false;
      if (f.critical !== undefined && review.critical !== f.critical) return false;
      if (f.handled !== undefined && review.handled !== f.handled) return false;
      if (f.keyword !== undefined && !review.text.some((part) => part.includes(String(f.keyword).toLowerCase())))
        return false;
      return true;
    })
    .sort((a, b) => b.writtenAt.getTime() - a.writtenAt.getTime() || (a.code < b.code ? 1 : a.code > b.code ? -1 : 0))
    .map((review) => review.code);
}

describe(`review filters against the contract's oracle on ${DRIVER}`, () => {
  it('agree for random combinations, across pages', async () => {
    await fc.assert(
      fc.asyncProperty(filtersArbitrary, fc.integer({ min: 1, max: 30 }), async (filters, limit) => {
        const valid =
          (filters.from === undefined || filters.to === undefined || filters.from <= filters.to) &&
          (filters.rating_min === undefined ||
            filters.rating_max === undefined ||
            filters.rating_min <= filters.rating_max);
        fc.pre(valid);
        const codes: string[] = [];
        for (let page = 1; page <= 100; page++) {
          const { data } = await api.reviews.list({ brand_code: fixture.brandCode, ...filters, page, limit });
          codes.push(...data.items.map((review) => review.review_id));
          if (!data.has_next) break;
        }
        expect(codes).toEqual(oracle(filters));
        // The same list walked by cursor (D-19), following the Link header's cursor.
        const byCursor: string[] = [];
        let cursor: string | undefined;
        for (let call = 1; call <= 100; call++) {
          const ctx = createRequestContext(services, { apiKey: DEMO_KEYS.active });
          const { data } = await createCaller(ctx).reviews.list({
            brand_code: fixture.brandCode,
            ...filters,
            limit,
            cursor,
          });
          byCursor.push(...data.items.map((review) => review.review_id));
          cursor = /[?&]cursor=([A-Za-z0-9_-]+)>/.exec(ctx.responseHeaders.Link ?? '')?.[1];
          if (!data.has_next || cursor === undefined) break;
        }
        expect(byCursor).toEqual(codes);
      }),
      { numRuns: 120, seed: 7 },
    );
  });

  it('has generated data that exercises every rule', () => {
    expect(generated.some((review) => review.rating === null)).toBe(true);
    expect(generated.some((review) => review.rating === 0.5)).toBe(true);
    expect(generated.some((review) => review.rating === 4.5)).toBe(true);
    expect(generated.some((review) => review.aiNegative && review.rating === 5)).toBe(true);
    expect(new Set(generated.map((review) => review.second)).size).toBeLessThan(generated.length); // ties
  });
});
