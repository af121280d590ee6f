/** A page of a list, as asked for (already validated: page ≥ 1, 1 ≤ limit ≤ 100). */
export type PageRequest = { page: number; limit: number };

/** The list `data` of spec §1. */
export type Page<T> = { items: T[]; page: number; limit: number; has_next: boolean };

/**
 * The one pagination of every list: LIMIT/OFFSET over a stable order (D-9), fetching one extra row so
 * `has_next` is exact without a count. A page past the last gives no items and has_next false (D-11).
 */
export async function paginate<T>(
  fetch: (window: { limit: number; offset: number }) => Promise<T[]>,
  { page, limit }: PageRequest,
): Promise<Page<T>> {
  const rows = await fetch({ limit: limit + 1, offset: (page - 1) * limit });
  return { items: rows.slice(0, limit), page, limit, has_next: rows.length > limit };
}
