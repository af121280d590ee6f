import { and, desc, eq, gte, lt, lte, not, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../client';
import { addDays, kstDayStart, kstTimestamp } from '../../kst';
import { plannedPerCall } from '../../plans';
import { reviews, shops } from '../../schema';
import { isPublicCode } from '../../schema/columns';
import type { platformEnum } from '../../schema/enums';
import { literalLimit, type PageRequest, paginate } from '../pagination';
import type { ReviewBrand } from './rules';
import { isCritical, matchesKeyword } from './rules';

/** The filters of the review list, already validated. Days are KST `YYYY-MM-DD`, both inclusive. */
export type ReviewFilters = {
  from?: string | undefined;
  to?: string | undefined;
  platform_shop_id?: string | undefined;
  platform?: (typeof platformEnum.enumValues)[number] | undefined;
  rating_min?: number | undefined;
  rating_max?: number | undefined;
  replied?: boolean | undefined;
  critical?: boolean | undefined;
  handled?: boolean | undefined;
  keyword?: string | undefined;
};

/**
 * A place in the list's order (D-9): the written time (whole seconds) and review_id of an item. Cursor
 * pages (D-19) read the items after one.
 */
export type ReviewPosition = { writtenAt: Date; reviewCode: string };

/** Which rows of the ordered list to read: LIMIT/OFFSET, optionally after a position (D-19). */
export type ReviewWindow = { limit: number; offset: number; after?: ReviewPosition | undefined };

/** One review (partner guide § Get one review), as both the list and the single read return it. */
function reviewColumns(brand: ReviewBrand) {
  return {
    review_id: reviews.reviewCode,
    platform_shop_id: shops.platformShopId,
    shop_name: shops.name,
    platform: shops.platform,
    writtenAt: reviews.writtenAt,
    content: reviews.content,
    rating: reviews.rating,
    menus: reviews.menus,
    isReplied: reviews.isReplied,
    replyContent: reviews.replyContent,
    replyAt: reviews.replyAt,
    is_critical: isCritical(brand),
    is_handled: reviews.isHandled,
  };
}

type ReviewRow = {
  writtenAt: Date;
  isReplied: boolean;
  replyContent: string | null;
  replyAt: Date | null;
  menus: string[] | null;
};

/** D-7: a reply is shown only when REPLIED; a scheduled or failed reply's stored text never is. */
function toReview<T extends ReviewRow>({ writtenAt, isReplied, replyContent, replyAt, menus, ...row }: T) {
  return {
    ...row,
    date: kstTimestamp(writtenAt),
    menus: menus?.length ? menus : null,
    reply_status: isReplied ? ('REPLIED' as const) : ('NOT_REPLIED' as const),
    reply_content: isReplied ? replyContent : null,
    reply_date: isReplied && replyAt ? kstTimestamp(replyAt) : null,
  };
}

/** Each filter of partner guide § List reviews of a brand as one condition; absent filters add none. */
function filterConditions(brand: ReviewBrand, filters: ReviewFilters): SQL[] {
  const conditions: (SQL | undefined)[] = [
    eq(reviews.brandId, brand.id),
    filters.from === undefined ? undefined : gte(reviews.writtenAt, kstDayStart(filters.from)),
    filters.to === undefined ? undefined : lt(reviews.writtenAt, kstDayStart(addDays(filters.to, 1))),
    filters.platform_shop_id === undefined ? undefined : eq(shops.platformShopId, filters.platform_shop_id),
    filters.platform === undefined ? undefined : eq(shops.platform, filters.platform),
    // Rules 1-2: the star bucket (rating rounded down, 0.5 as 1, none as 0) against the bounds. The bucket
    // is a whole number, so bucket ≥ 4.5 ⟺ bucket ≥ 5 and bucket ≤ 3.5 ⟺ bucket ≤ 3.
    filters.rating_min === undefined ? undefined : gte(reviews.starBucket, Math.ceil(filters.rating_min)),
    filters.rating_max === undefined ? undefined : lte(reviews.starBucket, Math.floor(filters.rating_max)),
    filters.replied === undefined ? undefined : eq(reviews.isReplied, filters.replied),
    filters.critical === undefined ? undefined : filters.critical ? isCritical(brand) : not(isCritical(brand)),
    filters.handled === undefined ? undefined : eq(reviews.isHandled, filters.handled),
    filters.keyword === undefined ? undefined : matchesKeyword(filters.keyword),
  ];
  return conditions.filter((condition): condition is SQL => condition !== undefined);
}

/**
 * The list query, unexecuted: newest first, ties by review_id descending (D-9). Exposed so the benchmark
 * can EXPLAIN exactly what the API runs.
 *
 * Keys first: the page's (written_at, review_code) are chosen from the (brand_id, written_at, review_code)
 * index alone where the filters allow (an index-only scan, read backwards), and only the rows of the page
 * are then fetched and joined, so a deep OFFSET skips index entries, not heap rows and joins.
 */
export function reviewListQuery(db: Db, brand: ReviewBrand, filters: ReviewFilters, window: ReviewWindow) {
  const { after } = window;
  // Keyset (D-19): strictly older in (written_at, review_code), a row comparison the same index reads
  // backwards from the position, so a page at any depth costs what the first one costs.
  const afterPosition =
    after &&
    sql`(${reviews.writtenAt}, ${reviews.reviewCode}) < (${after.writtenAt.toISOString()}, ${after.reviewCode})`;
  const keys = db.select({ writtenAt: reviews.writtenAt, reviewCode: reviews.reviewCode }).from(reviews);
  // The shop is joined for choosing keys only when a filter is on it: an inner join is never removed by
  // the planner, and reviews_brand_shop_fk guarantees every review has its shop.
  const needsShop = filters.platform !== undefined || filters.platform_shop_id !== undefined;
  const page = (needsShop ? keys.innerJoin(shops, eq(shops.id, reviews.shopId)) : keys)
    .where(and(...filterConditions(brand, filters), afterPosition))
    .orderBy(desc(reviews.writtenAt), desc(reviews.reviewCode))
    .limit(literalLimit(window.limit))
    .offset(window.offset)
    .as('page');
  return db
    .select(reviewColumns(brand))
    .from(page)
    .innerJoin(reviews, eq(reviews.reviewCode, page.reviewCode))
    .innerJoin(shops, eq(shops.id, reviews.shopId))
    .orderBy(desc(page.writtenAt), desc(page.reviewCode));
}

/**
 * Reviews of all shops of the brand, a page at a time; with `after`, the page of the items
 * after that position (D-19: the caller allows it on page 1 only, so the offset is 0).
 */
export function listReviews(
  db: Db,
  brand: ReviewBrand,
  filters: ReviewFilters,
  { after, ...page }: PageRequest & { after?: ReviewPosition | undefined },
) {
  return paginate(async (window) => {
    const query = reviewListQuery(db, brand, filters, { ...window, after });
    // A keyword's best plan depends on how common the word is: never a cached one (db/plans.ts).
    const rows = filters.keyword === undefined ? await query : await plannedPerCall(() => query);
    return rows.map(toReview);
  }, page);
}

/** One review of the brand by its public id; undefined when missing or of another brand. */
export async function findReview(db: Db, brand: ReviewBrand, reviewId: string) {
  if (!isPublicCode(reviewId)) return undefined;
  const [row] = await db
    .select(reviewColumns(brand))
    .from(reviews)
    .innerJoin(shops, eq(shops.id, reviews.shopId))
    .where(and(eq(reviews.brandId, brand.id), eq(reviews.reviewCode, reviewId)))
    .limit(1);
  return row && toReview(row);
}
