import { and, desc, eq, gte, lt, lte, not, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../client';
import { addDays, kstDayStart, kstTimestampOf } from '../../kst';
import { reviews, shops } from '../../schema';
import { isPublicCode } from '../../schema/columns';
import type { platformEnum } from '../../schema/enums';
import { literalLimit, type PageRequest, paginate } from '../pagination';
import { type CriticalBrand, isCritical, likePattern, matchesKeyword, type ReviewBrand } from './rules';

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
function reviewColumns(brand: CriticalBrand) {
  return {
    review_id: reviews.reviewCode,
    platform_shop_id: shops.platformShopId,
    shop_name: shops.name,
    platform: shops.platform,
    date: kstTimestampOf(reviews.writtenAt),
    content: reviews.content,
    rating: reviews.rating,
    menus: reviews.menus,
    isReplied: reviews.isReplied,
    replyContent: reviews.replyContent,
    replyDate: kstTimestampOf<null>(reviews.replyAt),
    is_critical: isCritical(brand),
    is_handled: reviews.isHandled,
  };
}

type ReviewRow = {
  review_id: string;
  platform_shop_id: string;
  shop_name: string;
  platform: (typeof platformEnum.enumValues)[number];
  date: string;
  content: string;
  rating: number | null;
  menus: string[] | null;
  isReplied: boolean;
  replyContent: string | null;
  replyDate: string | null;
  is_critical: boolean;
  is_handled: boolean;
};

/**
 * D-7: a reply is shown only when REPLIED; a scheduled or failed reply's stored text never is. The keys in
 * the order of the Review schema (routers/reviews/review.schema.ts): the answer is not parsed again (D-25).
 */
function toReview(row: ReviewRow) {
  const replied = row.isReplied;
  return {
    review_id: row.review_id,
    platform_shop_id: row.platform_shop_id,
    shop_name: row.shop_name,
    platform: row.platform,
    date: row.date,
    content: row.content,
    rating: row.rating,
    menus: row.menus?.length ? row.menus : null,
    reply_status: replied ? ('REPLIED' as const) : ('NOT_REPLIED' as const),
    reply_content: replied ? row.replyContent : null,
    reply_date: replied ? row.replyDate : null,
    is_critical: row.is_critical,
    is_handled: row.is_handled,
  };
}

/**
 * What a list statement binds, by name: the values of one call (ListValues), or placeholders of the same
 * names (the statement prepared once per shape, listReviews). Absent filters are absent here too.
 */
type Bindings = {
  brand: number;
  /** The brand's critical range, from the brand directory (D-7, D-23). */
  criticalMin: number;
  criticalMax: number;
  from?: Date;
  to?: Date;
  platformShopId?: string;
  platform?: (typeof platformEnum.enumValues)[number];
  ratingMin?: number;
  ratingMax?: number;
  replied?: boolean;
  handled?: boolean;
  keyword?: string;
  pattern?: string;
  afterAt?: string;
  afterCode?: string;
  offset?: number;
};

function bindingsOf(brand: ReviewBrand, filters: ReviewFilters, window: ReviewWindow): Bindings {
  const { min: criticalMin, max: criticalMax } = brand.criticalRange;
  const bound: Bindings = { brand: brand.id, criticalMin, criticalMax };
  if (filters.from !== undefined) bound.from = kstDayStart(filters.from);
  if (filters.to !== undefined) bound.to = kstDayStart(addDays(filters.to, 1));
  if (filters.platform_shop_id !== undefined) bound.platformShopId = filters.platform_shop_id;
  if (filters.platform !== undefined) bound.platform = filters.platform;
  // Rules 1-2: the star bucket (rating rounded down, 0.5 as 1, none as 0) against the bounds. The bucket
  // is a whole number, so bucket ≥ 4.5 ⟺ bucket ≥ 5 and bucket ≤ 3.5 ⟺ bucket ≤ 3.
  if (filters.rating_min !== undefined) bound.ratingMin = Math.ceil(filters.rating_min);
  if (filters.rating_max !== undefined) bound.ratingMax = Math.floor(filters.rating_max);
  if (filters.replied !== undefined) bound.replied = filters.replied;
  if (filters.handled !== undefined) bound.handled = filters.handled;
  if (filters.keyword !== undefined) {
    bound.keyword = filters.keyword;
    bound.pattern = likePattern(filters.keyword);
  }
  if (window.after) {
    bound.afterAt = window.after.writtenAt.toISOString();
    bound.afterCode = window.after.reviewCode;
  }
  if (window.offset > 0) bound.offset = window.offset;
  return bound;
}

/** The same names as placeholders, for a statement prepared once and run with each call's values. */
function placeholdersOf(bound: Bindings): Bindings {
  return Object.fromEntries(Object.keys(bound).map((name) => [name, sql.placeholder(name)])) as unknown as Bindings;
}

/** The brand as the critical rule takes it, from the bindings (values or placeholders). */
function criticalBrandOf(bound: Bindings): CriticalBrand {
  return { criticalRange: { min: bound.criticalMin, max: bound.criticalMax } };
}

/** Each filter of partner guide § List reviews of a brand as one condition; absent filters add none. */
function filterConditions(filters: ReviewFilters, bound: Bindings): SQL[] {
  const brand = criticalBrandOf(bound);
  const conditions: (SQL | undefined)[] = [
    eq(reviews.brandId, bound.brand),
    bound.from === undefined ? undefined : gte(reviews.writtenAt, bound.from),
    bound.to === undefined ? undefined : lt(reviews.writtenAt, bound.to),
    bound.platformShopId === undefined ? undefined : eq(shops.platformShopId, bound.platformShopId),
    bound.platform === undefined ? undefined : eq(shops.platform, bound.platform),
    bound.ratingMin === undefined ? undefined : gte(reviews.starBucket, bound.ratingMin),
    bound.ratingMax === undefined ? undefined : lte(reviews.starBucket, bound.ratingMax),
    bound.replied === undefined ? undefined : eq(reviews.isReplied, bound.replied),
    filters.critical === undefined ? undefined : filters.critical ? isCritical(brand) : not(isCritical(brand)),
    bound.handled === undefined ? undefined : eq(reviews.isHandled, bound.handled),
    filters.keyword === undefined || bound.keyword === undefined || bound.pattern === undefined
      ? undefined
      : matchesKeyword(filters.keyword, { brand: bound.brand, keyword: bound.keyword, pattern: bound.pattern }),
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
  return listQuery(db, filters, window, bindingsOf(brand, filters, window));
}

function listQuery(db: Db, filters: ReviewFilters, window: ReviewWindow, bound: Bindings) {
  // Keyset (D-19): strictly older in (written_at, review_code), a row comparison the same index reads
  // backwards from the position, so a page at any depth costs what the first one costs.
  const afterPosition =
    bound.afterAt !== undefined &&
    sql`(${reviews.writtenAt}, ${reviews.reviewCode}) < (${bound.afterAt}, ${bound.afterCode})`;
  const keys = db.select({ writtenAt: reviews.writtenAt, reviewCode: reviews.reviewCode }).from(reviews);
  // The shop is joined for choosing keys only when a filter is on it: an inner join is never removed by
  // the planner, and reviews_brand_shop_fk guarantees every review has its shop.
  const needsShop = filters.platform !== undefined || filters.platform_shop_id !== undefined;
  const chosen = (needsShop ? keys.innerJoin(shops, eq(shops.id, reviews.shopId)) : keys)
    .where(and(...filterConditions(filters, bound), afterPosition || undefined))
    .orderBy(desc(reviews.writtenAt), desc(reviews.reviewCode))
    .limit(literalLimit(window.limit));
  const page = (bound.offset === undefined ? chosen : chosen.offset(bound.offset)).as('page');
  return db
    .select(reviewColumns(criticalBrandOf(bound)))
    .from(page)
    .innerJoin(reviews, eq(reviews.reviewCode, page.reviewCode))
    .innerJoin(shops, eq(shops.id, reviews.shopId))
    .orderBy(desc(page.writtenAt), desc(page.reviewCode));
}

/**
 * The shape of a list statement: which filters it has (and the ones that change its text: critical's
 * sense, a keyword's length class), its page size, a position, an offset. Calls of one shape share one
 * statement text, built once (building it was a large part of a call's cost).
 */
function shapeOf(filters: ReviewFilters, window: ReviewWindow): string {
  const present = Object.keys(filters).filter((name) => filters[name as keyof ReviewFilters] !== undefined);
  const keyword = filters.keyword === undefined ? '' : [...filters.keyword].length >= 3 ? 'long' : 'short';
  return `${present.sort().join(',')}|${filters.critical ?? ''}|${keyword}|${window.limit}|${window.after ? 'after' : ''}|${window.offset > 0 ? 'offset' : ''}`;
}

/** At most this many shapes are kept per database handle; past it the cache starts over. */
const MAX_SHAPES = 256;

type Prepared = { execute(values: Record<string, unknown>): Promise<ReviewRow[]> };
const prepared = new WeakMap<Db, Map<string, Prepared>>();

function preparedList(db: Db, filters: ReviewFilters, window: ReviewWindow, bound: Bindings): Prepared {
  const shapes = prepared.get(db) ?? new Map<string, Prepared>();
  prepared.set(db, shapes);
  const shape = shapeOf(filters, window);
  let statement = shapes.get(shape);
  if (!statement) {
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    statement = listQuery(db, filters, window, placeholdersOf(bound)).prepare(`reviews_list ${shape}`) as Prepared;
    shapes.set(shape, statement);
  }
  return statement;
}

/** Bindings as the driver takes them: instants as ISO text, as drizzle encodes a timestamp column's value. */
function driverValues(bound: Bindings): Record<string, unknown> {
  const values: Record<string, unknown> = { ...bound };
  if (bound.from) values.from = bound.from.toISOString();
  if (bound.to) values.to = bound.to.toISOString();
  return values;
}

/**
 * Reviews of all shops of the brand, a page at a time; with `after`, the page of the items
 * after that position (D-19: the caller allows it on page 1 only, so the offset is 0). The statement is
 * prepared once per shape and connection, and PostgreSQL may run it on a cached generic plan, except with
 * a keyword: its best plan depends on how common the word is (the trigram or grams index, or the ordered
 * index scan), and a plan cached after five common words would read a whole brand for an absent one, so
 * that statement is sent unnamed and planned for its own word every time.
 */
export function listReviews(
  db: Db,
  brand: ReviewBrand,
  filters: ReviewFilters,
  { after, ...page }: PageRequest & { after?: ReviewPosition | undefined },
) {
  return paginate(async (window) => {
    const bound = bindingsOf(brand, filters, { ...window, after });
    const rows =
      filters.keyword === undefined
        ? await preparedList(db, filters, { ...window, after }, bound).execute(driverValues(bound))
        : await listQuery(db, filters, { ...window, after }, bound);
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
