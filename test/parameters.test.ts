import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND, endpointsWith } from './support/endpoints';
import { expectErrorBody, expectPartnerError } from './support/errors';
import { callerFor, startServer, testServices } from './support/services';

// D-11, common list parameters, as partners send them over REST and as typed callers send them.
let server: Awaited<ReturnType<typeof startServer>>;
let api: ReturnType<typeof callerFor>;

beforeAll(async () => {
  const database = await openTestDatabase();
  const services = testServices(database.db);
  server = await startServer(services);
  api = callerFor(services, DEMO_KEYS.active);
});

// Every list that takes page and limit, read from the router.
const LISTS = endpointsWith('page', 'limit').map((endpoint) => endpoint.path(DEMO_BRAND));

it('finds the page-numbered lists in the router', () => {
  expect(LISTS.length).toBeGreaterThan(0);
});

describe.each(LISTS)('%s', (path) => {
  it.each([
    ['', 1, 20],
    ['?page=1', 1, 20],
    ['?page=2&limit=1', 2, 1],
    ['?limit=100', 1, 100],
    ['?page=&limit=', 1, 20], // empty counts as absent
    ['?page=007', 7, 20],
    ['?unknown=1&limit=3', 1, 3], // unknown parameters are ignored
  ])('accepts %j as page %i, limit %i', async (query, page, limit) => {
    const response = await server.request(`${path}${query}`, { key: DEMO_KEYS.active });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ data: { page, limit } });
  });

  it.each([
    '?page=0',
    '?page=-1',
    '?page=1.5',
    '?page=abc',
    '?page=1e3',
    '?page=0x10',
    '?page=%201',
    '?page=9007199254740992',
    '?limit=0',
    '?limit=101',
    '?limit=1000',
    '?limit=true',
    '?page=1&page=2', // given twice
    '?limit=5&limit=5',
  ])('rejects %s with 400 PARTNER_API_INVALID_PARAMETER', async (query) => {
    expectErrorBody(
      await server.request(`${path}${query}`, { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
  });
});

// Every operation filtering by shop and by day range, read from the router.
const FILTERED = endpointsWith('platform_shop_id', 'from', 'to').map((endpoint) => endpoint.path(DEMO_BRAND));

it('finds the lists filtered by shop and day range in the router', () => {
  expect(FILTERED.length).toBeGreaterThan(0);
});

describe.each(FILTERED)('%s', (path) => {
  it.each(['platform_shop_id=%00', 'platform_shop_id=a%00b', 'from=0001-01-01', 'to=1899-12-31'])(
    'rejects %s with 400, never reaching the database',
    async (query) => {
      expectErrorBody(
        await server.request(`${path}?${query}`, { key: DEMO_KEYS.active }),
        'PARTNER_API_INVALID_PARAMETER',
      );
    },
  );
});

describe('typed callers (tRPC transport, createCaller)', () => {
  it('may call a list without any input', async () => {
    expect((await api.brands.list()).data).toMatchObject({ page: 1, limit: 20 });
  });

  it('accept numbers and digit strings', async () => {
    expect((await api.brands.list({ page: 1, limit: 2 })).data.limit).toBe(2);
    expect((await api.brands.list({ page: '1', limit: '2' })).data.limit).toBe(2);
    expect((await api.brands.list({ page: '' })).data.page).toBe(1);
  });

  it.each([{ page: 0 }, { limit: 101 }, { limit: 2.5 }, { page: '1e3' }, { page: ' 1' }])(
    'reject %j',
    async (input) => {
      await expectPartnerError(api.brands.list(input), 'PARTNER_API_INVALID_PARAMETER');
    },
  );

  it('judge parameters before the brand (D-13): bad limit on a missing brand is 400', async () => {
    await expectPartnerError(api.users.list({ brand_code: 'no-such', limit: 0 }), 'PARTNER_API_INVALID_PARAMETER');
    expectErrorBody(
      await server.request('/partner/v1/brands/no-such/shops?limit=0', { key: DEMO_KEYS.active }),
      'PARTNER_API_INVALID_PARAMETER',
    );
  });
});
