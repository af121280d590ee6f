import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../db/keys';
import { findPartnerByName, insertApiKey, revokeApiKey } from '../db/queries/apiKeys';
import { DEMO_KEYS } from '../db/seed/demo';
import { createCaller } from '../routers';
import { createRequestContext } from '../server/trpc/context';
import { NOW, openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectErrorBody, expectPartnerError } from './support/errors';
import { callerFor, startServer, testServices } from './support/services';

// D-14 over HTTP, with a limit of 3 a minute so the tests stay small.
let database: Awaited<ReturnType<typeof openTestDatabase>>;
beforeAll(async () => {
  database = await openTestDatabase();
});

describe('per-key rate limit (partner guide § Rate limit, D-14)', () => {
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
    const spentReset = missing.headers.get('ratelimit-reset');

    const limited = await server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active });
    expectErrorBody(limited, 'PARTNER_API_RATE_LIMITED');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('retry-after')).toBe(limited.headers.get('ratelimit-reset'));
    // once the budget is spent, Reset already says when the next call is accepted (D-14)
    expect(limited.headers.get('retry-after')).toBe(spentReset);

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
  it('refuses a key revoked after a success once the revocation reached the key cache, then counts it per address', async () => {
    const services = testServices(database.db);
    const partner = await findPartnerByName(database.db, 'Other Eats');
    if (!partner) throw new Error('Other Eats missing');
    const key = generateApiKey();
    const row = await insertApiKey(database.db, {
      partnerId: partner.id,
      keyHash: hashApiKey(key),
      displayPrefix: 'x',
    });
    if (!row) throw new Error('insert failed');
    const call = () =>
      createCaller(createRequestContext(services, { apiKey: key, clientAddress: '10.7.7.7' })).brands.list();
    expect((await call()).status).toBe('SUCCESS');
    await revokeApiKey(database.db, row.id, new Date(NOW.getTime() - 1000));
    await services.cache.caughtUp();
    for (let i = 0; i < 300; i++) await expectPartnerError(call(), 'PARTNER_API_KEY_INACTIVE');
    await expectPartnerError(call(), 'PARTNER_API_RATE_LIMITED');
  });

  it('takes the address from X-Forwarded-For only behind a trusted proxy', async () => {
    const { createApp } = await import('../server/http/app');
    const { createHttpServer } = await import('../server/http/server');
    const services = testServices(database.db);
    const server = createHttpServer(createApp(services, { trustProxy: 'loopback' }), services.log).listen(
      0,
      '127.0.0.1',
    );
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const { port } = server.address() as import('node:net').AddressInfo;
    const guess = (address: string) =>
      fetch(`http://127.0.0.1:${port}/partner/v1/brands`, {
        headers: { 'x-partner-api-key': 'pk_live_x', 'x-forwarded-for': address },
      });
    for (let i = 0; i < 300; i++) await (await guess('203.0.113.7')).arrayBuffer();
    expect((await guess('203.0.113.7')).status).toBe(429);
    expect((await guess('203.0.113.8')).status).toBe(401); // another client behind the same balancer
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('limits calls refused by the key check before asking the database, with Retry-After', async () => {
    const services = testServices(database.db);
    const call = (key: string | undefined, address: string) => {
      const context = createRequestContext(services, { apiKey: key, clientAddress: address });
      return { context, result: createCaller(context).brands.list({}) };
    };
    // a key seen valid from this address before the flood
    await call(DEMO_KEYS.active, '10.9.9.9').result;
    for (let i = 0; i < 300; i++)
      await expectPartnerError(call(`pk_live_guess${i}`, '10.9.9.9').result, 'PARTNER_API_KEY_INVALID');

    const blocked = call('pk_live_guess', '10.9.9.9');
    await expectPartnerError(blocked.result, 'PARTNER_API_RATE_LIMITED');
    expect(Number(blocked.context.responseHeaders['Retry-After'])).toBeGreaterThan(0);
    expect(blocked.context.responseHeaders['RateLimit-Limit']).toBeUndefined();
    await expectPartnerError(call(undefined, '10.9.9.9').result, 'PARTNER_API_RATE_LIMITED');

    // another address is not affected, and a working key is not locked out by the flood
    await expectPartnerError(call('pk_live_guess', '10.9.9.8').result, 'PARTNER_API_KEY_INVALID');
    expect((await call(DEMO_KEYS.active, '10.9.9.9').result).status).toBe('SUCCESS');
    // …while a revoked key is still refused, and counted against the flooded address
    await expectPartnerError(call(DEMO_KEYS.revoked, '10.9.9.9').result, 'PARTNER_API_RATE_LIMITED');
  });
});
