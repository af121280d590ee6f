import { expect } from 'vitest';

/** Every item of a list, walking pages of `limit`; every page but the last must be full. */
export async function walk<T>(
  read: (page: number, limit: number) => Promise<{ data: { items: T[]; has_next: boolean } }>,
  limit: number,
) {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const { data } = await read(page, limit);
    items.push(...data.items);
    if (!data.has_next) return items;
    expect(data.items).toHaveLength(limit);
  }
}

/** Byte order of two texts: the order of the database's "C" collation, which every list key uses (D-9). */
export const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
