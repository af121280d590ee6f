import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectErrorBody, expectPartnerError } from './support/errors';
import { callerFor, startServer, testServices } from './support/services';

// D-14 through the HTTP door, with a limit of 3 a minute so the tests stay small.
let database: Awaited<ReturnType<typeof openTestDatabase>>;
beforeAll(async () => {
  database = await openTestDatabase();
});

describe('per-key rate limit (spec §8, D-14)', () => {
  it('counts every call with a valid key, whatever its outcome, and refuses the next with 429', async () => {
    const server = await startServer(testServices(database.db, { RATE_LIMIT_PER_MINUTE: '3' }));
    const ok = await server.request('/partner/v1/brands', { key: DEMO_KEYS.active });
    expect(ok.headers.get('ratelimit-limit')).toBe('3');
    expect(ok.headers.get('ratelimit-remaining')).toBe('2');
    expect(ok.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
    expect(Number(ok.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    const invalid = await server.request('/partner/v1/brands?limit=500', { key: DEMO_KEYS.active });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('ratelimit-remaining')).toBe('1');
    const missing = await server.request('/partner/v1/brands/no-such/users', { key: DEMO_KEYS.active });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ratelimit-remaining')).toBe('0');

    const limited = await server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active });
    expectErrorBody(limited, 'PARTNER_API_RATE_LIMITED');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('retry-after')).toBe(limited.headers.get('ratelimit-reset'));

    // Another key has its own budget; unknown paths never reach the limiter.
    expect((await server.request('/partner/v1/brands', { key: DEMO_KEYS.other })).status).toBe(200);
    expectErrorBody(await server.request('/partner/v1/nothing', { key: DEMO_KEYS.active }), 'PARTNER_API_NOT_FOUND');
  });

  it('judges the limit before the parameters (D-13)', async () => {
    const server = await startServer(testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1' }));
    await server.request('/partner/v1/brands', { key: DEMO_KEYS.active });
    expectErrorBody(
      await server.request('/partner/v1/brands?page=zero', { key: DEMO_KEYS.active }),
      'PARTNER_API_RATE_LIMITED',
    );
  });

  it('holds through createCaller too: the limit is middleware, not HTTP', async () => {
    const services = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '2' });
    const caller = callerFor(services, DEMO_KEYS.active);
    await caller.brands.list({});
    await caller.brands.list({});
    await expectPartnerError(caller.brands.list({}), 'PARTNER_API_RATE_LIMITED');
  });
});

describe('refused keys per client address (D-14)', () => {
  it('limits calls refused by the key check, without rate-limit headers, before asking the database', async () => {
    const services = testServices(database.db);
    const guess = (address: string) => callerFor(services, 'pk_live_guess', address).brands.list({});
    for (let i = 0; i < 300; i++) await expectPartnerError(guess('10.9.9.9'), 'PARTNER_API_KEY_INVALID');
    await expectPartnerError(guess('10.9.9.9'), 'PARTNER_API_RATE_LIMITED');
    await expectPartnerError(guess('10.9.9.8'), 'PARTNER_API_KEY_INVALID');
    // a valid key from the same address is not refused by the key check, so it is not blocked by it...
    // ...but the guard runs first, so the address stays blocked until its window frees: by design.
    await expectPartnerError(
      callerFor(services, DEMO_KEYS.active, '10.9.9.9').brands.list({}),
      'PARTNER_API_RATE_LIMITED',
    );
  });
});
