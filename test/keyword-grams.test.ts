import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { createRandom, type Random } from '../db/seed/random';
import { openTestDatabase } from './support/database';

// partner_grams (db/migrations) is what the short-keyword index holds and what a keyword of one or two
// characters is looked up by (db/queries/reviews/rules.ts): the distinct lower-cased characters and pairs of
// neighbouring characters of the content and of each menu name, a pair never spanning two texts. An
// element it leaves out is a review a search silently misses, so its output is held to the rule itself.
// partner_brand_grams is what the index holds since a list reads one brand (D-8): the same grams, each
// prefixed by the brand id and ':', so a short keyword's posting lists hold that brand's reviews only.

let database: DatabaseHandle; // closed by the support module after the file
beforeAll(async () => {
  database = await openTestDatabase();
});

/** A text[] literal of `menus`, one parameter per element (an array parameter would be spread). */
function menusArray(menus: (string | null)[] | null) {
  if (menus === null) return sql`NULL::text[]`;
  if (menus.length === 0) return sql`'{}'::text[]`;
  return sql`ARRAY[${sql.join(
    menus.map((menu) => sql`${menu}::text`),
    sql`, `,
  )}]`;
}

/** What the database returns for `partner_grams(content, menus)`, as a set. */
async function gramsOf(content: string | null, menus: (string | null)[] | null): Promise<string[]> {
  const [row] = await database.rows<{ grams: string[] }>(
    sql`SELECT partner_grams(${content}::text, ${menusArray(menus)}) AS grams`,
  );
  return [...(row?.grams ?? [])].sort();
}

/** What the database returns for `partner_brand_grams(brand, content, menus)`, in its order. */
async function brandGramsOf(brand: number, content: string | null, menus: (string | null)[] | null) {
  const [row] = await database.rows<{ grams: string[] }>(
    sql`SELECT partner_brand_grams(${brand}::integer, ${content}::text, ${menusArray(menus)}) AS grams`,
  );
  return row?.grams;
}

/** partner_grams(content, menus) in its own order, each element prefixed by `brand:`. */
async function prefixedGrams(brand: number, content: string | null, menus: (string | null)[] | null) {
  const [row] = await database.rows<{ grams: string[] }>(
    sql`SELECT partner_grams(${content}::text, ${menusArray(menus)}) AS grams`,
  );
  return row?.grams.map((gram) => `${brand}:${gram}`);
}

/** A review's texts drawn from `alphabet`: content and up to three menu names, each at most `longest` long. */
function randomReview(random: Random, alphabet: string, longest: number) {
  const characters = [...alphabet];
  const text = () =>
    Array.from({ length: random.int(0, longest) }, () => characters[random.int(0, characters.length - 1)]).join('');
  const content = text();
  return { content, menus: Array.from({ length: random.int(0, 3) }, text) };
}

/** The rule: characters are code points, lower-cased by the database's own lower(). */
async function expectedGrams(content: string | null, menus: (string | null)[] | null): Promise<string[]> {
  const grams = new Set<string>();
  for (const text of [content, ...(menus ?? [])]) {
    if (text === null) continue;
    const [row] = await database.rows<{ lowered: string }>(sql`SELECT lower(${text}::text) AS lowered`);
    const characters = [...(row?.lowered ?? '')];
    characters.forEach((character, index) => {
      grams.add(character);
      const next = characters[index + 1];
      if (next !== undefined) grams.add(character + next);
    });
  }
  return [...grams].sort();
}

describe('keyword grams: the characters and neighbouring pairs a short keyword is looked up by', () => {
  it.each<[string, string | null, (string | null)[] | null]>([
    ['ASCII, lower-cased', 'AbC', null],
    ['Korean text with spaces', '바삭한 치킨', null],
    ['a repeated character is listed once', 'aaaa', null],
    ['a single character has no pair', '맛', null],
    ['characters outside the BMP are one character each', '😀x😀', null],
    ['the content and each menu name', '양념', ['후라이드', '반반 치킨']],
    ['an empty text has none', '', ['']],
    ['no content: the menus alone', null, ['치즈볼']],
    ['a missing menu name is skipped', '콜라', [null, '사이다']],
    ['no content and no menus: none', null, null],
  ])('%s', async (_rule, content, menus) => {
    expect(await gramsOf(content, menus)).toEqual(await expectedGrams(content, menus));
  });

  it('a pair never spans the content and a menu, or two menus', async () => {
    const grams = await gramsOf('ab', ['cd', 'ef']);
    expect(grams).not.toContain('bc');
    expect(grams).not.toContain('de');
    expect(grams).toContain('cd');
  });

  it('holds on random texts of Korean, ASCII of both cases, digits, spaces and emoji', async () => {
    const random = createRandom(20_261_125);
    for (let sample = 0; sample < 60; sample++) {
      const { content, menus } = randomReview(random, '가나다라마바사치킨맛있AaBbZz09 !%_😀🍗', 24);
      expect(
        await gramsOf(content, menus),
        `partner_grams(${JSON.stringify(content)}, ${JSON.stringify(menus)})`,
      ).toEqual(await expectedGrams(content, menus));
    }
  });
});

describe("brand keyword grams: partner_grams, each prefixed by the review's brand", () => {
  it.each<[string, number, string | null, (string | null)[] | null]>([
    ['Korean text and menus', 1, '바삭한 치킨', ['후라이드', '반반 치킨']],
    ['a brand id of several digits', 123_456, 'AbC', null],
    ['grams holding the separator and digits', 7, '1:2 :x', ['3:']],
    ['no content: the menus alone', 2, null, ['치즈볼']],
    ['a missing menu name is skipped', 3, '콜라', [null, '사이다']],
  ])('%s', async (_rule, brand, content, menus) => {
    const grams = await brandGramsOf(brand, content, menus);
    expect(grams).toEqual(await prefixedGrams(brand, content, menus));
    expect(grams?.length).toBeGreaterThan(0);
  });

  it('no text: an empty array, as partner_grams gives, never NULL', async () => {
    expect(await brandGramsOf(5, null, null)).toEqual([]);
    expect(await brandGramsOf(5, '', [''])).toEqual([]);
  });

  it("no two brands share an element, even when one brand's text starts like another's id", async () => {
    // Brand 1's gram "2:" and brand 12's ":" would both read "12::" under a separator the id could hold.
    const one = await brandGramsOf(1, '2:x', ['2', ':']);
    const twelve = await brandGramsOf(12, ':x', ['2:']);
    expect(one?.filter((element) => twelve?.includes(element))).toEqual([]);
  });

  it("a short keyword's brand grams are contained in its own brand's reviews only", async () => {
    const [row] = await database.rows<{ own: boolean; other: boolean; absent: boolean }>(sql`
      SELECT partner_brand_grams(4, '너무 짜요', NULL) @> partner_brand_grams(4, '짜요', NULL) AS own,
             partner_brand_grams(4, '너무 짜요', NULL) @> partner_brand_grams(5, '짜요', NULL) AS other,
             partner_brand_grams(4, '너무 짜다', NULL) @> partner_brand_grams(4, '짜요', NULL) AS absent`);
    expect(row).toEqual({ own: true, other: false, absent: false });
  });

  it('holds on random texts and brand ids', async () => {
    const random = createRandom(20_261_126);
    for (let sample = 0; sample < 30; sample++) {
      const brand = random.int(1, 100_000);
      const { content, menus } = randomReview(random, '가나다치킨맛AaZz09 :%_😀', 16);
      expect(
        await brandGramsOf(brand, content, menus),
        `partner_brand_grams(${brand}, ${JSON.stringify(content)}, ${JSON.stringify(menus)})`,
      ).toEqual(await prefixedGrams(brand, content, menus));
    }
  });
});
