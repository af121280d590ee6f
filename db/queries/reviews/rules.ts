import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { reviews } from '../../schema';
import type { BrandScope, CriticalRange } from '../brands';

// The review rules (D-7, D-8) that are not plain columns, each defined once for the field and its filter.

/** A review read's brand, its range from the brand cache, so a replica (D-23) follows a change as the primary. */
export type ReviewBrand = BrandScope & { criticalRange: CriticalRange };

/** What the critical rule reads of a brand: values, or placeholders of a statement prepared once per shape. */
export type CriticalBrand = {
  criticalRange: { min: number | SQLWrapper; max: number | SQLWrapper };
};

/** is_critical (D-7): the star bucket in the brand's range, OR a negative AI judgement (unrated: bucket 0). */
export function isCritical({ criticalRange: range }: CriticalBrand): SQL<boolean> {
  return sql<boolean>`(${reviews.starBucket} BETWEEN ${range.min}::smallint AND ${range.max}::smallint OR ${reviews.aiNegative})`;
}

/** `%`, `_` and `\` are literal in a keyword (D-8): escape them for LIKE's default escape character. */
export function likePattern(keyword: string): string {
  return `%${keyword.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/**
 * keyword (D-8): a case-insensitive substring of the content or one menu name; under three characters the grams
 * index of migration 0012 finds candidates first (no trigram). `brand` must be the one the statement reads.
 */
export function matchesKeyword(keyword: string, brand: BrandScope['id'] | SQLWrapper): SQL<boolean> {
  const pattern = likePattern(keyword);
  const exact = sql<boolean>`(${reviews.content} ILIKE ${pattern} OR (partner_menus_text(${reviews.menus}) ILIKE ${pattern} AND EXISTS (SELECT 1 FROM unnest(${reviews.menus}) AS menu(name) WHERE menu.name ILIKE ${pattern})))`;
  if ([...keyword].length >= 3) return exact;
  return sql<boolean>`(partner_brand_grams(${reviews.brandId}, ${reviews.content}, ${reviews.menus}) @> partner_brand_grams(${brand}, ${keyword}, NULL) AND ${exact})`;
}
