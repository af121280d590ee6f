import { sql } from 'drizzle-orm';

export type PageRequest = { page: number; limit: number };

export type Page<T> = { items: T[]; page: number; limit: number; has_next: boolean };

/** The one pagination of every list: LIMIT/OFFSET over D-9's order, one extra row for an exact `has_next`. */
export async function paginate<T>(
  fetch: (window: { limit: number; offset: number }) => Promise<T[]>,
  { page, limit }: PageRequest,
): Promise<Page<T>> {
  const rows = await fetch({ limit: limit + 1, offset: (page - 1) * limit });
  return { items: rows.slice(0, limit), page, limit, has_next: rows.length > limit };
}

/** A LIMIT in the text: PostgreSQL plans a LIMIT parameter as a tenth of the rows (test/plans.test.ts). */
export function literalLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`not a row count: ${limit}`);
  return sql.raw(String(limit)) as unknown as number;
}
