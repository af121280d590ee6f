import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { appRouter } from '../routers';
import type { PartnerErrorCode } from '../server/trpc/errors';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND, ENDPOINTS, loadSamples } from './support/endpoints';
import { expectErrorBody, expectPartnerError } from './support/errors';
import { callerFor, startServer, testServices } from './support/services';

// partner guide § Authentication and D-13, run against every operation of the router (test/support/endpoints.ts
// reads them from it) on both transports: REST and createCaller (the tRPC transport shares the same
// middleware; see http.test.ts).

const AUTH_FAILURES: [string, string | undefined, PartnerErrorCode][] = [
  ['no header', undefined, 'PARTNER_API_KEY_REQUIRED'],
  ['an empty header', '', 'PARTNER_API_KEY_REQUIRED'],
  ['an unknown key', 'pk_live_00000000000000000000000000000000', 'PARTNER_API_KEY_INVALID'],
  ['a revoked key', DEMO_KEYS.revoked, 'PARTNER_API_KEY_INACTIVE'],
  ['an expired key', DEMO_KEYS.expired, 'PARTNER_API_KEY_EXPIRED'],
  ['a key of a deactivated partner', DEMO_KEYS.suspended, 'PARTNER_API_FORBIDDEN'],
];

let server: Awaited<ReturnType<typeof startServer>>;
let services: ReturnType<typeof testServices>;

beforeAll(async () => {
  const database = await openTestDatabase();
  services = testServices(database.db);
  await loadSamples(services);
  server = await startServer(services);
});

it('covers every procedure of the router', () => {
  expect(ENDPOINTS.map((endpoint) => endpoint.name).sort()).toEqual(Object.keys(appRouter._def.procedures).sort());
});

describe.each(ENDPOINTS)('$name', (endpoint) => {
  describe.each(AUTH_FAILURES)('with %s', (_label, key, code) => {
    it(`answers ${code} over REST, with no rate-limit headers`, async () => {
      const response = await server.request(endpoint.path(DEMO_BRAND), { key });
      expectErrorBody(response, code);
      expect(response.headers.get('ratelimit-limit')).toBeNull();
      expect(response.headers.get('x-request-id')).toBeTruthy();
    });

    it(`answers ${code} through createCaller`, async () => {
      await expectPartnerError(endpoint.call(callerFor(services, key), DEMO_BRAND), code);
    });
  });

  it('answers the active key with the success envelope', async () => {
    const response = await server.request(endpoint.path(DEMO_BRAND), { key: DEMO_KEYS.active });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'SUCCESS', status_code: 200, message: 'OK' });
    expect(response.body).toHaveProperty('data');
    expect(Object.keys(response.body).sort()).toEqual(['data', 'message', 'status', 'status_code']);
    expect(await endpoint.call(callerFor(services, DEMO_KEYS.active), DEMO_BRAND)).toEqual(response.body);
  });

  if (endpoint.brandScoped) {
    it('answers a brand of another partner exactly like a missing brand (partner guide § Authentication)', async () => {
      const foreign = await server.request(endpoint.path('burger-town'), { key: DEMO_KEYS.active });
      // A missing brand has no ids of its own: it borrows the foreign brand's, so only the brand differs.
      const missing = await server.request(endpoint.path('no-such-brand', 'burger-town'), { key: DEMO_KEYS.active });
      expectErrorBody(foreign, 'PARTNER_API_BRAND_NOT_FOUND');
      expect(missing.body).toEqual(foreign.body);
      await expectPartnerError(
        endpoint.call(callerFor(services, DEMO_KEYS.active), 'burger-town'),
        'PARTNER_API_BRAND_NOT_FOUND',
      );
    });

    it('lets the other partner read its own brand and not ours', async () => {
      const own = await server.request(endpoint.path('burger-town'), { key: DEMO_KEYS.other });
      expect(own.status).toBe(200);
      expectErrorBody(
        await server.request(endpoint.path(DEMO_BRAND), { key: DEMO_KEYS.other }),
        'PARTNER_API_BRAND_NOT_FOUND',
      );
    });

    it("hides the deactivated partner's brand behind 403, never 404", async () => {
      expectErrorBody(
        // No key reads the deactivated partner's brand, so it has no sampled ids; the key is refused first (D-13).
        await server.request(endpoint.path('noodle-bar', DEMO_BRAND), { key: DEMO_KEYS.suspended }),
        'PARTNER_API_FORBIDDEN',
      );
    });
  }

  it('judges the key before the parameters (D-13)', async () => {
    const response = await server.request(`${endpoint.path(DEMO_BRAND)}?page=0&limit=abc`);
    expectErrorBody(response, 'PARTNER_API_KEY_REQUIRED');
  });
});

describe('brand list scope', () => {
  it('lists only the brands of the key’s partner', async () => {
    const demo = await callerFor(services, DEMO_KEYS.active).brands.list({});
    const other = await callerFor(services, DEMO_KEYS.other).brands.list({});
    expect(demo.data.items.map((brand) => brand.brand_code)).not.toContain('burger-town');
    expect(other.data.items.map((brand) => brand.brand_code)).toEqual(['burger-town']);
  });
});

describe('a user of another brand', () => {
  it('is 404 PARTNER_API_USER_NOT_FOUND, like a missing one', async () => {
    const other = await server.request(`/partner/v1/brands/${DEMO_BRAND}/users/u-pz-001`, { key: DEMO_KEYS.active });
    const missing = await server.request(`/partner/v1/brands/${DEMO_BRAND}/users/u-none`, { key: DEMO_KEYS.active });
    expectErrorBody(other, 'PARTNER_API_USER_NOT_FOUND');
    expect(missing.body).toEqual(other.body);
    // and it is readable in its own brand
    expect(
      (await server.request('/partner/v1/brands/pizza-lab/users/u-pz-001', { key: DEMO_KEYS.active })).status,
    ).toBe(200);
  });
});
