import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../db/client';
import { createRandom } from '../db/seed/random';
import { openTestDatabase } from './support/database';

// partner_grams (db/migrations) is what the short-keyword index holds and what a keyword of one or two
// characters is looked up by (db/queries/reviews/rules.ts): the distinct lower-cased characters and pairs of
// neighbouring characters of the content and of each menu name, a pair never spanning two texts. An
// element it leaves out is a review a search silently misses, so its output is held to the rule itself.

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
    const alphabet = [...'가나다라마바사치킨맛있AaBbZz09 !%_😀🍗'];
    const random = createRandom(20_261_125);
    const text = () =>
      Array.from({ length: random.int(0, 24) }, () => alphabet[random.int(0, alphabet.length - 1)]).join('');
    for (let sample = 0; sample < 60; sample++) {
      const content = text();
      const menus = Array.from({ length: random.int(0, 3) }, text);
      expect(
        await gramsOf(content, menus),
        `partner_grams(${JSON.stringify(content)}, ${JSON.stringify(menus)})`,
      ).toEqual(await expectedGrams(content, menus));
    }
  });
});
