import { and, desc, eq, gte, lt, lte, not, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../client';
import { addDays, kstDayStart, kstTimestampOf } from '../../kst';
import { reviews, shops } from '../../schema';
import { PUBLIC_CODE } from '../../schema/columns';
import type { platformEnum } from '../../schema/enums';
import { literalLimit, type PageRequest, paginate } from '../pagination';
import { preparedOnce } from '../prepared';
import { type CriticalBrand, isCritical, matchesKeyword, type ReviewBrand } from './rules';

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

/** A place in the list's order (D-9): the written time (whole seconds) and review_id; cursors read after it (D-19). */
export type ReviewPosition = { writtenAt: Date; reviewCode: string };

/** Which rows of the ordered list to read: LIMIT/OFFSET, optionally after a position (D-19). */
export type ReviewWindow = { limit: number; offset: number; after?: ReviewPosition | undefined };

/** A review's fields as the API shows them (with toReview), is_critical by `brand`'s range. */
export function reviewColumns(brand: CriticalBrand) {
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

type ReviewRow = Awaited<ReturnType<typeof listQuery>>[number];

/** D-7: a reply is shown only when REPLIED. Keys in the Review schema's order: the answer is not parsed again (D-25). */
export function toReview(row: ReviewRow) {
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

/** What a list statement binds, by name: one call's values, or placeholders of the same names. */
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
  // Rules 1-2: the star bucket is whole, so bucket ≥ 4.5 ⟺ bucket ≥ 5 and bucket ≤ 3.5 ⟺ bucket ≤ 3.
  if (filters.rating_min !== undefined) bound.ratingMin = Math.ceil(filters.rating_min);
  if (filters.rating_max !== undefined) bound.ratingMax = Math.floor(filters.rating_max);
  if (filters.replied !== undefined) bound.replied = filters.replied;
  if (filters.handled !== undefined) bound.handled = filters.handled;
  if (window.after) {
    bound.afterAt = window.after.writtenAt.toISOString();
    bound.afterCode = window.after.reviewCode;
  }
  if (window.offset > 0) bound.offset = window.offset;
  return bound;
}

function placeholdersOf(bound: Bindings): Bindings {
  return Object.fromEntries(Object.keys(bound).map((name) => [name, sql.placeholder(name)])) as unknown as Bindings;
}

function criticalBrandOf(bound: Bindings): CriticalBrand {
  return { criticalRange: { min: bound.criticalMin, max: bound.criticalMax } };
}

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
    // Never a placeholder: a list with a keyword is planned for each word (listReviews).
    filters.keyword === undefined ? undefined : matchesKeyword(filters.keyword, bound.brand),
  ];
  return conditions.filter((condition): condition is SQL => condition !== undefined);
}

/**
 * The list query (newest first, D-9), exposed so the benchmark can EXPLAIN it. The page's keys come from
 * the (brand_id, written_at, review_code) index first, so a deep OFFSET skips index entries, not rows.
 */
export function reviewListQuery(db: Db, brand: ReviewBrand, filters: ReviewFilters, window: ReviewWindow) {
  return listQuery(db, filters, window, bindingsOf(brand, filters, window));
}

/** The list's order (D-9): newest first, then by review_id, both descending. */
export const LIST_ORDER = [desc(reviews.writtenAt), desc(reviews.reviewCode)];

/** Keyset (D-19): the reviews after a place in the list's order, a row comparison the index reads backwards. */
export function afterInList(writtenAt: unknown, reviewCode: unknown): SQL {
  return sql`(${reviews.writtenAt}, ${reviews.reviewCode}) < (${writtenAt}, ${reviewCode})`;
}

function listQuery(db: Db, filters: ReviewFilters, window: ReviewWindow, bound: Bindings) {
  const afterPosition = bound.afterAt !== undefined && afterInList(bound.afterAt, bound.afterCode);
  const keys = db.select({ writtenAt: reviews.writtenAt, reviewCode: reviews.reviewCode }).from(reviews);
  // The shop is joined only for a filter on it: the planner never removes an inner join.
  const needsShop = filters.platform !== undefined || filters.platform_shop_id !== undefined;
  const chosen = (needsShop ? keys.innerJoin(shops, eq(shops.id, reviews.shopId)) : keys)
    .where(and(...filterConditions(filters, bound), afterPosition || undefined))
    .orderBy(...LIST_ORDER)
    .limit(literalLimit(window.limit));
  const page = (bound.offset === undefined ? chosen : chosen.offset(bound.offset)).as('page');
  return db
    .select(reviewColumns(criticalBrandOf(bound)))
    .from(page)
    .innerJoin(reviews, eq(reviews.reviewCode, page.reviewCode))
    .innerJoin(shops, eq(shops.id, reviews.shopId))
    .orderBy(desc(page.writtenAt), desc(page.reviewCode));
}

/** The shape of a list statement: calls of one shape share one statement text, built once. */
function shapeOf(filters: ReviewFilters, window: ReviewWindow): string {
  const present = Object.keys(filters).filter((name) => filters[name as keyof ReviewFilters] !== undefined);
  return `${present.sort().join(',')}|${filters.critical ?? ''}|${window.limit}|${window.after ? 'after' : ''}|${window.offset > 0 ? 'offset' : ''}`;
}

function preparedList(db: Db, filters: ReviewFilters, window: ReviewWindow, bound: Bindings) {
  const shape = shapeOf(filters, window);
  return preparedOnce(db, `reviews_list ${shape}`, () => listQuery(db, filters, window, placeholdersOf(bound)));
}

/** Bindings as the driver takes them: instants as ISO text, as drizzle encodes a timestamp column's value. */
function driverValues(bound: Bindings): Record<string, unknown> {
  const values: Record<string, unknown> = { ...bound };
  if (bound.from) values.from = bound.from.toISOString();
  if (bound.to) values.to = bound.to.toISOString();
  return values;
}

/**
 * Reviews of all shops of the brand, a page at a time, after `after` if given (D-19). Statements are
 * prepared per shape, except with a keyword: its best plan depends on how common the word is, so it is
 * planned for each word.
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

export async function findReview(db: Db, brand: ReviewBrand, reviewId: string) {
  if (!PUBLIC_CODE.test(reviewId)) return undefined;
  const [row] = await db
    .select(reviewColumns(brand))
    .from(reviews)
    .innerJoin(shops, eq(shops.id, reviews.shopId))
    .where(and(eq(reviews.brandId, brand.id), eq(reviews.reviewCode, reviewId)))
    .limit(1);
  return row && toReview(row);
}
