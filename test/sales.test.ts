import { and, eq, gte, inArray, lte, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDailyAggregate } from '../db/aggregate';
import type { DatabaseHandle } from '../db/client';
import { addDays, kstToday, mondayOf } from '../db/kst';
import { brands, salesDaily, salesSnapshots, shops } from '../db/schema';
import { DEMO_KEYS } from '../db/seed/demo';
import { NOW, openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectErrorBody, expectPartnerError } from './support/errors';
import { byteOrder, walk } from './support/pages';
import { callerFor, startServer, testServices } from './support/services';

// Sales (partner guide § Sales), with D-6 (the daily aggregate), D-9 (ties), D-10 (user null, weeks), D-11.
// The template was aggregated with NOW, the clock of these callers.

const TODAY = kstToday(NOW);
const YESTERDAY = addDays(TODAY, -1);
const LINKED_TODAY = '10999001'; // chicken-house, BAEMIN, linked at 00:00 KST today (D-6)
const WITHOUT_USER = '10200417'; // chicken-house, BAEMIN, the one shop without a brand user
const PATH = `/partner/v1/brands/${DEMO_BRAND}/sales`;
const GROUP_BYS = ['shop', 'platform', 'user', 'date', 'week'] as const;

let database: DatabaseHandle;
let api: ReturnType<typeof callerFor>;
let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  database = await openTestDatabase();
  const services = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1000000' });
  api = callerFor(services, DEMO_KEYS.active);
  server = await startServer(services);
});

type Caller = ReturnType<typeof callerFor>;
type SalesInput = Omit<Parameters<Caller['sales']['list']>[0], 'brand_code' | 'page' | 'limit'>;
type SalesRow = Awaited<ReturnType<Caller['sales']['list']>>['data']['items'][number];

/** Every row of the sales for `input`, walking pages of 100. */
function sales(input: SalesInput = {}, caller: Caller = api) {
  return walk((page, limit) => caller.sales.list({ brand_code: DEMO_BRAND, ...input, page, limit }), 100);
}

const totalOf = (rows: SalesRow[]) => rows.reduce((sum, row) => sum + row.sales_amount, 0);

/**
 * partner guide § Sales order with the ties of D-9: sales_amount descending, then the grouping key ascending in byte
 * order: platform_shop_id then platform, or user_code with the null user after every user of the same amount.
 */
function bySalesThenKey(a: SalesRow, b: SalesRow) {
  return (
    b.sales_amount - a.sales_amount ||
    byteOrder(a.platform_shop_id ?? '', b.platform_shop_id ?? '') ||
    byteOrder(a.platform ?? '', b.platform ?? '') ||
    Number(a.user === null) - Number(b.user === null) ||
    byteOrder(a.user?.user_code ?? '', b.user?.user_code ?? '')
  );
}

// A past range that starts on a Wednesday and ends on a Friday, several weeks apart.
const MID_FROM = addDays(mondayOf(addDays(TODAY, -45)), 2);
const MID_TO = addDays(mondayOf(addDays(TODAY, -14)), 4);

describe('every group_by has the same total (D-10)', () => {
  it.each<[string, SalesInput]>([
    ['the default range', {}],
    ['a mid-week range', { from: MID_FROM, to: MID_TO }],
    ['one platform', { platform: 'CPEATS' }],
    ['one platform over a mid-week range', { from: MID_FROM, to: MID_TO, platform: 'YOGIYO' }],
    ['the shop without user', { platform_shop_id: WITHOUT_USER }],
    ['one shop on its platform', { platform_shop_id: '10482913', platform: 'BAEMIN' }],
  ])('%s', async (_label, filters) => {
    const totals = await Promise.all(GROUP_BYS.map(async (group_by) => totalOf(await sales({ ...filters, group_by }))));
    expect(totals[0]).toBeGreaterThan(0);
    expect(new Set(totals).size).toBe(1);
  });

  it('by shop, each shop is the sum of its daily snapshots in the range', async () => {
    const rows = await sales({ from: MID_FROM, to: MID_TO });
    const snapshots = await database.db
      .select({ platform: shops.platform, id: shops.platformShopId, amount: salesSnapshots.amount })
      .from(salesSnapshots)
      .innerJoin(shops, eq(shops.id, salesSnapshots.shopId))
      .innerJoin(brands, eq(brands.id, shops.brandId))
      .where(and(eq(brands.brandCode, DEMO_BRAND), gte(salesSnapshots.day, MID_FROM), lte(salesSnapshots.day, MID_TO)));
    const perShop = new Map<string, number>();
    for (const { platform, id, amount } of snapshots) {
      perShop.set(`${platform}|${id}`, (perShop.get(`${platform}|${id}`) ?? 0) + amount);
    }
    expect(new Map(rows.map((row) => [`${row.platform}|${row.platform_shop_id}`, row.sales_amount]))).toEqual(perShop);
  });
});

describe('weeks (D-10)', () => {
  it('over a range from a Wednesday to a Friday, each week is the sum of its days inside the range', async () => {
    expect([new Date(MID_FROM).getUTCDay(), new Date(MID_TO).getUTCDay()]).toEqual([3, 5]);
    const days = await sales({ from: MID_FROM, to: MID_TO, group_by: 'date' });
    const perWeek = new Map<string, number>();
    for (const day of days) {
      const monday = mondayOf(day.date ?? '');
      perWeek.set(monday, (perWeek.get(monday) ?? 0) + day.sales_amount);
    }
    const weeks = await sales({ from: MID_FROM, to: MID_TO, group_by: 'week' });
    expect(weeks.map((week) => [week.week_start, week.sales_amount])).toEqual(
      [...perWeek].sort(([a], [b]) => byteOrder(b, a)),
    );
    // Newest first; the first and last week_start are the Mondays of `to` and `from`.
    expect(weeks.at(0)?.week_start).toBe(mondayOf(MID_TO));
    expect(weeks.at(-1)?.week_start).toBe(mondayOf(MID_FROM));
    expect(weeks.length).toBeGreaterThanOrEqual(4);
  });

  it('counts only the days inside the range: the weeks at both ends are partial', async () => {
    const weeks = await sales({ from: MID_FROM, to: MID_TO, group_by: 'week' });
    const wholeWeek = async (monday: string) =>
      (await sales({ from: monday, to: addDays(monday, 6), group_by: 'week' })).map((week) => week.sales_amount);
    const first = await wholeWeek(mondayOf(MID_FROM));
    const last = await wholeWeek(mondayOf(MID_TO));
    expect(first).toHaveLength(1);
    expect(weeks.at(-1)?.sales_amount).toBeLessThan(first[0] ?? 0);
    expect(weeks.at(0)?.sales_amount).toBeLessThan(last[0] ?? 0);
    // A week wholly inside the range is the whole week.
    const inside = weeks.at(1);
    expect([inside?.sales_amount]).toEqual(await wholeWeek(inside?.week_start ?? ''));
  });
});

describe('users (D-10)', () => {
  it('each user is the sum of its shops; shops without a user are one `user: null` row', async () => {
    const byShop = await sales();
    const perUser = new Map<string | null, number>();
    for (const row of byShop) {
      const code = row.user?.user_code ?? null;
      perUser.set(code, (perUser.get(code) ?? 0) + row.sales_amount);
    }
    const byUser = await sales({ group_by: 'user' });
    expect(new Map(byUser.map((row) => [row.user?.user_code ?? null, row.sales_amount]))).toEqual(perUser);
    const withoutUser = byUser.filter((row) => row.user === null);
    expect(withoutUser).toHaveLength(1);
    expect(withoutUser[0]?.sales_amount).toBe(
      byShop.find((row) => row.platform_shop_id === WITHOUT_USER)?.sales_amount,
    );
    expect(byUser.find((row) => row.user?.user_code === 'u-ch-001')?.user).toEqual({
      user_code: 'u-ch-001',
      display_name: '강남점',
    });
  });
});

describe('today and the shop linked today (D-6)', () => {
  it('today never appears, even with to=today, though today has snapshots', async () => {
    expect(await database.db.$count(salesSnapshots, eq(salesSnapshots.day, TODAY))).toBeGreaterThan(0);
    expect(await sales({ from: TODAY, to: TODAY, group_by: 'date' })).toEqual([]);
    expect((await sales({ from: addDays(TODAY, -2), to: TODAY, group_by: 'date' })).map((row) => row.date)).toEqual([
      YESTERDAY,
      addDays(TODAY, -2),
    ]);
    for (const group_by of GROUP_BYS.filter((group) => group !== 'date')) {
      expect(await sales({ from: addDays(TODAY, -7), to: TODAY, group_by })).toEqual(
        await sales({ from: addDays(TODAY, -7), to: YESTERDAY, group_by }),
      );
    }
  });

  it('the shop linked today has no row, even for snapshots before today; nor do non-sales platforms', async () => {
    const shopOf = async (platform: 'BAEMIN' | 'NAVER', id?: string) => {
      const [row] = await database.db
        .select({ id: shops.id, platformShopId: shops.platformShopId })
        .from(shops)
        .innerJoin(brands, eq(brands.id, shops.brandId))
        .where(
          and(
            eq(brands.brandCode, DEMO_BRAND),
            eq(shops.platform, platform),
            id ? eq(shops.platformShopId, id) : undefined,
          ),
        )
        .limit(1);
      if (!row) throw new Error(`no ${platform} shop`);
      return row;
    };
    const linked = await shopOf('BAEMIN', LINKED_TODAY);
    const naver = await shopOf('NAVER');
    // History a link collects, and a snapshot on a platform without sales (partner guide § Sales): both must stay out.
    await database.db.insert(salesSnapshots).values([
      { shopId: linked.id, day: YESTERDAY, amount: 777_000 },
      { shopId: naver.id, day: YESTERDAY, amount: 555_000 },
    ]);
    try {
      await buildDailyAggregate(database.db, { now: NOW });
      const shown = (await sales({ from: addDays(TODAY, -7), to: TODAY })).map((row) => row.platform_shop_id);
      expect(shown.length).toBeGreaterThan(10);
      expect(shown).not.toContain(LINKED_TODAY);
      expect(shown).not.toContain(naver.platformShopId);
      expect(await sales({ platform_shop_id: LINKED_TODAY })).toEqual([]);
      expect(await sales({ platform_shop_id: naver.platformShopId })).toEqual([]);
      expect((await sales({ group_by: 'user' })).map((row) => row.user?.user_code)).not.toContain('u-ch-010');
    } finally {
      await database.db
        .delete(salesSnapshots)
        .where(and(eq(salesSnapshots.day, YESTERDAY), inArray(salesSnapshots.shopId, [linked.id, naver.id])));
      await buildDailyAggregate(database.db, { now: NOW });
    }
  });
});

describe('fields (partner guide § Sales)', () => {
  const FIELDS = [
    'group_by',
    'date',
    'week_start',
    'platform_shop_id',
    'shop_name',
    'platform',
    'user',
    'sales_amount',
  ];
  const FILLED: Record<(typeof GROUP_BYS)[number], string[]> = {
    shop: ['platform_shop_id', 'shop_name', 'platform', 'user'],
    platform: ['platform'],
    user: ['user'],
    date: ['date'],
    week: ['week_start'],
  };

  it.each(GROUP_BYS)('group_by=%s fills exactly its fields, in the documented field order', async (group_by) => {
    const rows = await sales({ group_by });
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(FIELDS);
      expect(row.group_by).toBe(group_by);
      // The user of the shop without one, and its group, are null on purpose (D-10).
      const ownerless = row.user === null && (row.platform_shop_id === WITHOUT_USER || group_by === 'user');
      for (const key of ['date', 'week_start', 'platform_shop_id', 'shop_name', 'platform', 'user'] as const) {
        const shouldFill = FILLED[group_by].includes(key) && !(key === 'user' && ownerless);
        expect(row[key] === null, `${key} of ${JSON.stringify(row)}`).toBe(!shouldFill);
      }
      if (row.user) expect(Object.keys(row.user)).toEqual(['user_code', 'display_name']);
    }
  });

  it('group_by defaults to shop, and only the sales platforms appear', async () => {
    const rows = await sales();
    expect(rows).toEqual(await sales({ group_by: 'shop' }));
    expect(new Set(rows.map((row) => row.platform))).toEqual(new Set(['BAEMIN', 'CPEATS', 'YOGIYO']));
  });
});

describe('order (partner guide § Sales, D-9) and pages', () => {
  it.each(['shop', 'platform', 'user'] as const)('%s: sales_amount descending, ties by the key', async (group_by) => {
    const rows = await sales({ group_by });
    expect(rows).toEqual([...rows].sort(bySalesThenKey));
  });

  it.each(['date', 'week'] as const)('%s: newest first', async (group_by) => {
    const keys = (await sales({ from: MID_FROM, to: MID_TO, group_by })).map((row) => row.date ?? row.week_start ?? '');
    expect(keys).toEqual([...new Set(keys)].sort().reverse());
  });

  it('breaks ties by the key when amounts are equal; the null user is last among equal amounts only', async () => {
    // Its own copy: every amount becomes 0, and a CPEATS shop takes the platform_shop_id of a BAEMIN one.
    const copy = await openTestDatabase();
    const caller = callerFor(testServices(copy.db), DEMO_KEYS.active);
    const [gangnam] = await copy.db
      .select({ brandId: shops.brandId, userId: shops.userId })
      .from(shops)
      .where(and(eq(shops.platform, 'BAEMIN'), eq(shops.platformShopId, '10482913')));
    if (!gangnam) throw new Error('demo data: 10482913 is missing');
    const [twin] = await copy.db
      .insert(shops)
      .values({
        brandId: gangnam.brandId,
        userId: gangnam.userId,
        platform: 'CPEATS',
        platformShopId: '10482913',
        name: '치킨하우스 쌍둥이점',
        categoryName: '치킨',
        status: 'ACTIVE',
        linkedAt: new Date('2020-01-01T00:00:00Z'),
      })
      .returning({ id: shops.id });
    if (!twin) throw new Error('not inserted');
    await copy.db.insert(salesDaily).values({
      shopId: twin.id,
      day: YESTERDAY,
      brandId: gangnam.brandId,
      salesAmount: 0,
      runningRows: 1,
      runningSalesAmount: 0,
    });
    // The running totals follow the amounts: all 0.
    await copy.db.update(salesDaily).set({ salesAmount: 0, runningSalesAmount: 0 });

    const byShop = await sales({ group_by: 'shop' }, caller);
    const keys = byShop.map((row) => [row.platform_shop_id ?? '', row.platform ?? ''] as const);
    expect(keys).toEqual([...keys].sort((a, b) => byteOrder(a[0], b[0]) || byteOrder(a[1], b[1])));
    expect(keys.filter(([id]) => id === '10482913').map(([, platform]) => platform)).toEqual(['BAEMIN', 'CPEATS']);
    // Byte order, not number order: '10200417' < '1384021' < '1402288' < '1417760' < '583021'.
    expect(keys.at(0)?.[0]).toBe(WITHOUT_USER);
    expect(keys.at(-1)?.[0]).toBe('593318');

    expect((await sales({ group_by: 'platform' }, caller)).map((row) => row.platform)).toEqual([
      'BAEMIN',
      'CPEATS',
      'YOGIYO',
    ]);

    const users = (await sales({ group_by: 'user' }, caller)).map((row) => row.user?.user_code ?? null);
    expect(users.at(-1)).toBeNull();
    expect(users.slice(0, -1)).toEqual([...users.slice(0, -1)].sort());

    // Only among equal amounts: with more sales, the null user comes first.
    const [ownerless] = await copy.db
      .select({ id: shops.id })
      .from(shops)
      .where(eq(shops.platformShopId, WITHOUT_USER));
    await copy.db
      .update(salesDaily)
      // 1 a day: the running amount is the running row count.
      .set({ salesAmount: 1, runningSalesAmount: sql`${salesDaily.runningRows}` })
      .where(inArray(salesDaily.shopId, [ownerless?.id ?? -1]));
    const reordered = await sales({ group_by: 'user' }, caller);
    expect(reordered.map((row) => row.user?.user_code ?? null)).toEqual([null, ...users.slice(0, -1)]);
    expect(reordered).toEqual([...reordered].sort(bySalesThenKey));
  });

  it.each([
    ['shop', 7],
    ['platform', 1],
    ['user', 4],
    ['date', 9],
    ['week', 2],
  ] as const)('group_by=%s: walking pages of %i gives the rows of one page of 100', async (group_by, limit) => {
    const all = (await api.sales.list({ brand_code: DEMO_BRAND, group_by, limit: 100 })).data;
    expect(all.has_next).toBe(false);
    expect(
      await walk((page, size) => api.sales.list({ brand_code: DEMO_BRAND, group_by, page, limit: size }), limit),
    ).toEqual(all.items);
  });
});

describe('default range (partner guide § Dates and time (KST))', () => {
  it('without from and to: the 30 days before today through today', async () => {
    const rows = await sales({ group_by: 'date' });
    expect(rows).toEqual(await sales({ from: addDays(TODAY, -30), to: TODAY, group_by: 'date' }));
    expect([rows.at(0)?.date, rows.at(-1)?.date]).toEqual([YESTERDAY, addDays(TODAY, -30)]);
  });

  it('with only to: the 30 days before it through it', async () => {
    const to = addDays(TODAY, -50);
    const rows = await sales({ to, group_by: 'date' });
    expect([rows.at(0)?.date, rows.at(-1)?.date]).toEqual([to, addDays(to, -30)]);
    expect(await sales({ to })).toEqual(await sales({ from: addDays(to, -30), to }));
  });

  it('with only from: through today', async () => {
    const from = addDays(TODAY, -60);
    expect(await sales({ from, group_by: 'week' })).toEqual(await sales({ from, to: TODAY, group_by: 'week' }));
  });
});

describe('parameters (partner guide § Errors, D-11, D-13)', () => {
  it.each([
    '?platform=NAVER', // sales cover BAEMIN, CPEATS and YOGIYO only
    '?platform=DDANGYO',
    '?platform=MUKKEBI',
    '?platform=baemin',
    '?group_by=month',
    '?group_by=SHOP',
    '?group_by=shop&group_by=user', // given twice
    '?from=2026-02-30',
    '?to=2026-1-1',
    '?from=yesterday',
    `?from=${YESTERDAY}&to=${addDays(TODAY, -2)}`, // from later than to
    `?from=${addDays(TODAY, 1)}`, // from later than the default to (today)
    '?page=0',
  ])('rejects %s with 400 PARTNER_API_INVALID_PARAMETER', async (query) => {
    expectErrorBody(
      await server.request(`${PATH}${query}`, { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
  });

  it.each(['?platform=BAEMIN', '?platform=CPEATS', '?platform=YOGIYO&group_by=week', '?group_by=&platform='])(
    'accepts %s',
    async (query) => {
      expect((await server.request(`${PATH}${query}`, { key: DEMO_KEYS.active })).status).toBe(200);
    },
  );

  it('judges parameters, from > to included, before the brand (D-13); a foreign brand is 404', async () => {
    const foreign = '/partner/v1/brands/burger-town/sales';
    expectErrorBody(
      await server.request(`${foreign}?platform=NAVER`, { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
    expectErrorBody(
      await server.request(`${foreign}?from=${YESTERDAY}&to=${addDays(TODAY, -2)}`, { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
    expectErrorBody(await server.request(foreign, { key: DEMO_KEYS.active }), 'PARTNER_API_BRAND_NOT_FOUND');
    await expectPartnerError(
      api.sales.list({ brand_code: DEMO_BRAND, from: addDays(TODAY, 1) }),
      'PARTNER_API_INVALID_PARAMETER',
    );
    await expectPartnerError(api.sales.list({ brand_code: 'burger-town' }), 'PARTNER_API_BRAND_NOT_FOUND');
  });
});
