import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectPartnerError } from './support/errors';
import { byteOrder, walk } from './support/pages';
import { callerFor, testServices } from './support/services';

// Brands, users and shops (partner guide § Endpoints), with the ordering of D-9, through createCaller.
let api: ReturnType<typeof callerFor>;

beforeAll(async () => {
  const database = await openTestDatabase();
  api = callerFor(testServices(database.db), DEMO_KEYS.active);
});

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+09:00$/;

describe('brands (partner guide § List brands)', () => {
  it('lists the partner’s brands oldest first, ties by code, with exactly the documented fields', async () => {
    const { data } = await api.brands.list({});
    expect(data.items.map((brand) => brand.brand_code)).toEqual(['chicken-house', 'bibim-table', 'pizza-lab']);
    for (const brand of data.items) {
      expect(Object.keys(brand)).toEqual(['brand_code', 'display_name', 'created_at']);
      expect(brand.created_at).toMatch(TIMESTAMP);
    }
    expect(data).toMatchObject({ page: 1, limit: 20, has_next: false });
  });
});

describe('users (partner guide § List users of a brand, § Get one user)', () => {
  it('orders by registration time then user_code (D-9)', async () => {
    const { data } = await api.users.list({ brand_code: DEMO_BRAND, limit: 100 });
    expect(data.items.map((user) => user.user_code)).toEqual([
      'u-ch-001',
      'u-ch-003',
      'u-ch-002',
      'u-ch-004',
      'u-ch-005',
      'u-ch-006',
      'u-ch-007',
      'u-ch-008',
      'u-ch-009',
      'u-ch-011',
      'u-ch-012',
      'u-ch-010',
    ]);
  });

  it('carries platform accounts in every status, and [] for a user with none', async () => {
    const { data } = await api.users.list({ brand_code: DEMO_BRAND, limit: 100 });
    const statuses = new Set(data.items.flatMap((user) => user.platform_accounts.map((account) => account.status)));
    expect([...statuses].sort()).toEqual(['ACTIVE', 'ERROR', 'INACTIVE', 'LINKING']);
    expect(data.items.find((user) => user.user_code === 'u-ch-012')?.platform_accounts).toEqual([]);
    for (const user of data.items) {
      expect(Object.keys(user)).toEqual(['user_code', 'display_name', 'platform_accounts', 'created_at']);
      expect(user.created_at).toMatch(TIMESTAMP);
    }
  });

  it('returns one user exactly as it stands in the list', async () => {
    const { data } = await api.users.list({ brand_code: DEMO_BRAND, limit: 100 });
    for (const user of data.items) {
      expect((await api.users.get({ brand_code: DEMO_BRAND, user_code: user.user_code })).data).toEqual(user);
    }
  });

  it('answers a missing user with 404 PARTNER_API_USER_NOT_FOUND', async () => {
    await expectPartnerError(
      api.users.get({ brand_code: DEMO_BRAND, user_code: 'u-none' }),
      'PARTNER_API_USER_NOT_FOUND',
    );
    await expectPartnerError(api.users.get({ brand_code: DEMO_BRAND, user_code: '' }), 'PARTNER_API_USER_NOT_FOUND');
  });
});

describe('shops (partner guide § List shops of a brand)', () => {
  it('orders by name, platform as text, platform_shop_id (D-9)', async () => {
    const { data } = await api.shops.list({ brand_code: DEMO_BRAND, limit: 100 });
    const keys = data.items.map((shop) => [shop.name, shop.platform, shop.platform_shop_id] as const);
    const sorted = [...keys].sort((a, b) => byteOrder(a[0], b[0]) || byteOrder(a[1], b[1]) || byteOrder(a[2], b[2]));
    expect(keys).toEqual(sorted);
    expect(keys.length).toBe(33);
    // Same name on two platforms: DDANGYO before YOGIYO as text (enum order would say the opposite).
    const ilsan = keys.filter(([name]) => name.endsWith('일산점')).map(([, platform]) => platform);
    expect(ilsan).toEqual(['DDANGYO', 'YOGIYO']);
    // Same name and platform: by platform_shop_id.
    const jamsil = keys
      .filter(([name, platform]) => name.endsWith('잠실점') && platform === 'BAEMIN')
      .map(([, , id]) => id);
    expect(jamsil).toEqual(['10733391', '10733408']);
  });

  it('has exactly the documented fields, every status, and a shop without user', async () => {
    const { data } = await api.shops.list({ brand_code: DEMO_BRAND, limit: 100 });
    for (const shop of data.items) {
      expect(Object.keys(shop)).toEqual([
        'name',
        'platform',
        'platform_shop_id',
        'category_name',
        'status',
        'user',
        'managers',
        'critical_review_alerts',
      ]);
      expect(shop.critical_review_alerts.length).toBeLessThanOrEqual(3);
    }
    expect(new Set(data.items.map((shop) => shop.status))).toEqual(new Set(['ACTIVE', 'INACTIVE', 'FAILED']));
    expect(new Set(data.items.map((shop) => shop.platform)).size).toBe(6);
    expect(data.items.find((shop) => shop.platform_shop_id === '10200417')?.user).toBeNull();
  });

  it('lists the registered alert numbers, not the assigned managers (critical-review alert rules)', async () => {
    const { data } = await api.shops.list({ brand_code: DEMO_BRAND, limit: 100 });
    const gangnam = data.items.find((shop) => shop.platform === 'BAEMIN' && shop.platform_shop_id === '10482913');
    expect(gangnam).toMatchObject({
      user: { user_code: 'u-ch-001', display_name: '강남점' },
      managers: [
        { display_name: '김영수', role: 'OWNER' },
        { display_name: '이지은', role: 'MANAGER' },
      ],
      critical_review_alerts: [
        { phone_number: '010-1234-5678', enabled: true, manager: { display_name: '김영수', role: 'OWNER' } },
        // rule 1: a number of nobody among the administrators may be registered
        { phone_number: '010-3456-7890', enabled: true, manager: null },
        // a manager not assigned to the shop can own a registered, here disabled, number
        { phone_number: '010-4567-8901', enabled: false, manager: { display_name: '최서연', role: 'SUPERVISOR' } },
      ],
    });
    // rule 3: 이지은 is assigned but has no registered number, so she is not a recipient
    expect(gangnam?.critical_review_alerts.map((alert) => alert.manager?.display_name)).not.toContain('이지은');
    const withNullRole = data.items
      .flatMap((shop) => shop.managers)
      .find((manager) => manager.display_name === '한도윤');
    expect(withNullRole).toEqual({ display_name: '한도윤', role: null });
    expect(data.items.some((shop) => shop.managers.length === 0 && shop.critical_review_alerts.length === 0)).toBe(
      true,
    );
  });
});

describe('pagination (partner guide § Pages, D-9, D-11)', () => {
  it.each([1, 4, 7])('walking pages of %i gives every row once, in the order of one big page', async (limit) => {
    const all = (await api.shops.list({ brand_code: DEMO_BRAND, limit: 100 })).data.items;
    expect(await walk((page, size) => api.shops.list({ brand_code: DEMO_BRAND, page, limit: size }), limit)).toEqual(
      all,
    );
    const users = (await api.users.list({ brand_code: DEMO_BRAND, limit: 100 })).data.items;
    expect(await walk((page, size) => api.users.list({ brand_code: DEMO_BRAND, page, limit: size }), limit)).toEqual(
      users,
    );
  });

  it('has_next is exact at the boundary: false when the last page is exactly full', async () => {
    const total = (await api.shops.list({ brand_code: DEMO_BRAND, limit: 100 })).data.items.length;
    expect((await api.shops.list({ brand_code: DEMO_BRAND, limit: total })).data.has_next).toBe(false);
    expect((await api.shops.list({ brand_code: DEMO_BRAND, limit: total - 1 })).data.has_next).toBe(true);
  });

  it('a page past the last is empty with has_next false', async () => {
    expect((await api.users.list({ brand_code: DEMO_BRAND, page: 99, limit: 100 })).data).toEqual({
      items: [],
      page: 99,
      limit: 100,
      has_next: false,
    });
    expect((await api.brands.list({ page: Number.MAX_SAFE_INTEGER })).data.items).toEqual([]);
  });
});
