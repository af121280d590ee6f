import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { createCaller } from '../routers';
import { createLogger } from '../server/logger';
import { createRequestContext } from '../server/trpc/context';
import { errorEnvelope, partnerCodeOf } from '../server/trpc/errors';
import type { RateLimiter } from '../server/trpc/ratelimit/sliding-window';
import { MemorySlidingWindow } from '../server/trpc/ratelimit/sliding-window';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectErrorBody, expectPartnerError } from './support/errors';
import { PRODUCTION_RATE_LIMIT, startServer, testServices } from './support/services';

// The service under abuse. Each block is one attack, stated as the rule that must hold.
let database: Awaited<ReturnType<typeof openTestDatabase>>;
beforeAll(async () => {
  database = await openTestDatabase();
});

/** A limiter that counts what it is asked, around the real in-process one. */
function countingLimiter(limit: number) {
  const inner = new MemorySlidingWindow({ name: 'default', limit, windowMs: 60_000 });
  const asked: number[] = [];
  const limiter: RateLimiter = {
    limit: (identifier, calls = 1) => {
      asked.push(calls);
      return inner.limit(identifier, calls);
    },
  };
  return { limiter, asked };
}

const batchPath = (calls: number, procedure = 'brands.list') =>
  `/partner/v1/trpc/${Array(calls).fill(procedure).join(',')}?batch=1&input=${encodeURIComponent(
    JSON.stringify(Object.fromEntries(Array.from({ length: calls }, (_, i) => [i, {}]))),
  )}`;

describe('tRPC batches (D-20)', () => {
  it('refuses more than 10 calls with one 400, before any key check or count', async () => {
    const { limiter, asked } = countingLimiter(100);
    const services = testServices(database.db, {}, limiter);
    const lookupsBefore = services.cache.keys.lookups;
    const server = await startServer(services);
    for (const calls of [11, 1_000]) {
      const answer = await server.request(batchPath(calls), { key: DEMO_KEYS.active });
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body)).toContain('PARTNER_API_INVALID_PARAMETER');
    }
    expect(asked).toEqual([]);
    expect(services.cache.keys.lookups).toBe(lookupsBefore);
  });

  it('checks the key once and counts the whole batch once, before any call runs', async () => {
    const { limiter, asked } = countingLimiter(100);
    const server = await startServer(testServices(database.db, {}, limiter));
    const answer = await server.request(batchPath(10), { key: DEMO_KEYS.active });
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(10);
    expect(asked).toEqual([10]);
    expect(answer.headers.get('ratelimit-remaining')).toBe('90');
  });

  it('refuses a batch that does not fit the remaining budget whole, with one 429 that counts nothing', async () => {
    const { limiter, asked } = countingLimiter(12);
    const server = await startServer(testServices(database.db, {}, limiter));
    expect((await server.request(batchPath(10), { key: DEMO_KEYS.active })).status).toBe(200);
    const refused = await server.request(batchPath(3), { key: DEMO_KEYS.active });
    expect(refused.status).toBe(429);
    expect(refused.body).toHaveLength(3);
    expect(JSON.stringify(refused.body)).toContain('PARTNER_API_RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-remaining')).toBe('2');
    // The two calls left still pass: the refused batch took none of them.
    expect((await server.request(batchPath(2), { key: DEMO_KEYS.active })).status).toBe(200);
    expect(asked).toEqual([10, 3, 2]);
  });

  it('refuses a batch with a bad key once, for every call', async () => {
    const server = await startServer(testServices(database.db));
    const refused = await server.request(batchPath(3), { key: DEMO_KEYS.revoked });
    expect(refused.status).toBe(401);
    expect(refused.body).toHaveLength(3);
    expect(refused.headers.get('ratelimit-limit')).toBeNull();
  });
});

describe('the refused-key guard (D-14)', () => {
  it('counts concurrent bad keys atomically: 1,000 at once give 300 × 401 and 700 × 429, one database read at a time', async () => {
    const services = testServices(database.db);
    await services.cache.caughtUp();
    const lookupsBefore = services.cache.keys.lookups;
    const results = await Promise.allSettled(
      Array.from({ length: 1_000 }, (_, i) =>
        createCaller(
          createRequestContext(services, { apiKey: `pk_live_bad${i}`, clientAddress: '198.51.100.1' }),
        ).brands.list({}),
      ),
    );
    const codes = results.map((result) => (result.status === 'rejected' ? partnerCodeOf(result.reason) : 'OK'));
    expect(codes.filter((code) => code === 'PARTNER_API_KEY_INVALID')).toHaveLength(300);
    expect(codes.filter((code) => code === 'PARTNER_API_RATE_LIMITED')).toHaveLength(700);
    // The first key's lookup, then the 999 that arrived while it ran, 500 a statement, one statement at a time.
    expect(services.cache.keys.lookups - lookupsBefore).toBeLessThanOrEqual(3);
  });

  it('never refuses a valid key for what others sent from its address, even one this instance has not seen', async () => {
    const services = testServices(database.db);
    const call = (apiKey: string) =>
      createCaller(createRequestContext(services, { apiKey, clientAddress: '198.51.100.2' })).brands.list({});
    for (let i = 0; i < 300; i++) await expectPartnerError(call(`pk_live_bad${i}`), 'PARTNER_API_KEY_INVALID');
    await expectPartnerError(call('pk_live_bad'), 'PARTNER_API_RATE_LIMITED');
    // Never seen here before (as after a restart), and the address's budget is spent.
    expect((await call(DEMO_KEYS.other)).status).toBe('SUCCESS');
  });

  it('gives the guard’s 429 a Retry-After over HTTP', async () => {
    const server = await startServer(testServices(database.db, PRODUCTION_RATE_LIMIT));
    for (let i = 0; i < 300; i++) await server.request('/partner/v1/brands', { key: `pk_live_bad${i}` });
    const refused = await server.request('/partner/v1/brands', { key: 'pk_live_bad' });
    expectErrorBody(refused, 'PARTNER_API_RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const valid = await server.request('/partner/v1/brands', { key: DEMO_KEYS.active });
    expect(valid.status).toBe(200);
    expect(valid.headers.get('ratelimit-limit')).toBe('100');
  });
});

describe('exact paths (D-12)', () => {
  it.each([
    `/partner/v1/brands/${DEMO_BRAND}/users/.`,
    `/partner/v1/brands/${DEMO_BRAND}/users/..`,
    `/partner/v1/brands/${DEMO_BRAND}/reviews/%2E`,
    `/partner/v1/brands/${DEMO_BRAND}/reviews/%2e%2E`,
    `/partner/v1/brands/${DEMO_BRAND}//reviews`,
    '/partner/v1//brands',
    '/partner/v1/TRPC/brands.list',
    '/partner/v1/trpc//brands.list',
    '/partner/v1/Trpc/brands.list?batch=1&input=%7B%7D',
    '/partner/v1/trpc/brands.list/',
  ])('GET %s is 404 PARTNER_API_NOT_FOUND, never another resource', async (path) => {
    const server = await startServer(testServices(database.db));
    expectErrorBody(await server.request(path, { key: DEMO_KEYS.active }), 'PARTNER_API_NOT_FOUND');
  });

  it('still serves the exact tRPC path', async () => {
    const server = await startServer(testServices(database.db));
    expect((await server.request('/partner/v1/trpc/brands.list', { key: DEMO_KEYS.active })).status).toBe(200);
  });
});

describe('answers inside the envelope (D-12)', () => {
  it('answers a request without Host with the 400 envelope and a request id', async () => {
    const server = await startServer(testServices(database.db));
    const { port } = new URL(server.base);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () =>
        socket.write('GET /partner/v1/brands HTTP/1.1\r\nConnection: close\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk;
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw.toLowerCase()).toMatch(/\r\nx-request-id: [\w-]+\r\n/);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual(errorEnvelope('PARTNER_API_INVALID_PARAMETER'));
  });

  it('echoes nothing of the caller in tRPC error bodies: no procedure name (D-18)', async () => {
    const server = await startServer(testServices(database.db));
    const probe = 'brands.scriptalert';
    for (const key of [DEMO_KEYS.active, undefined]) {
      const answer = await server.request(`/partner/v1/trpc/${probe}`, { key });
      expect(answer.status).toBe(404);
      expect(JSON.stringify(answer.body)).not.toContain('scriptalert');
      expect(JSON.stringify(answer.body)).not.toContain('"path"');
    }
  });
});

describe('the cause of a refusal in the log (D-12)', () => {
  it('names the parameter and the rule, never the key or the value', async () => {
    const lines: string[] = [];
    const services = testServices(database.db);
    services.log = createLogger('info', (line) => lines.push(line));
    const server = await startServer(services);
    await server.request('/partner/v1/brands?limit=1234567', { key: DEMO_KEYS.active });
    await server.request(`/partner/v1/brands/${DEMO_BRAND}/reviews?from=2026-03-02&to=2026-03-01`, {
      key: DEMO_KEYS.active,
    });
    await server.request('/partner/v1/brands', { key: 'pk_live_secretguess' });
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.msg === 'request');
    const [limit, range, badKey] = logged;
    expect(limit).toMatchObject({ status: 400, code: 'PARTNER_API_INVALID_PARAMETER' });
    expect(limit?.cause).toEqual([expect.objectContaining({ parameter: 'limit', rule: expect.any(String) })]);
    expect(range).toMatchObject({ status: 400, cause: expect.stringMatching(/from/) });
    expect(badKey).toMatchObject({ status: 401, code: 'PARTNER_API_KEY_INVALID' });
    const text = lines.join('\n');
    expect(text).not.toContain('1234567');
    expect(text).not.toContain('secretguess');
    expect(text).not.toContain(DEMO_KEYS.active);
  });
});

describe('only GET, at exact paths (D-12)', () => {
  it.each(['/partner/v1/openapi.json', '/docs', '/docs/assets/swagger-ui.css', '/healthz'])(
    'answers OPTIONS and HEAD on %s with the 404 envelope',
    async (path) => {
      const server = await startServer(testServices(database.db));
      expectErrorBody(await server.request(path, { method: 'OPTIONS' }), 'PARTNER_API_NOT_FOUND');
      const head = await server.request(path, { method: 'HEAD' });
      expect(head.status).toBe(404);
      expect(head.headers.get('content-type')).toBe('application/json');
    },
  );

  it('answers a malformed escape under /docs/assets with the 404 envelope, on any method, and logs no error', async () => {
    const lines: string[] = [];
    const services = testServices(database.db);
    services.log = createLogger('info', (line) => lines.push(line));
    const server = await startServer(services);
    for (const path of ['/docs/assets/%ZZanything', '/docs/assets/%', '/docs/assets/%C0%AF'])
      for (const method of ['GET', 'POST', 'DELETE']) {
        expectErrorBody(await server.request(path, { method }), 'PARTNER_API_NOT_FOUND');
      }
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.filter((line) => line.msg !== 'request')).toEqual([]);
    expect(logged.map((line) => line.cause)).not.toContainEqual(expect.stringContaining('ZZ'));
  });
});

describe('a tRPC input that is not JSON (D-12)', () => {
  it('is 400, and its access line names the rule, never the input', async () => {
    const lines: string[] = [];
    const services = testServices(database.db);
    services.log = createLogger('info', (line) => lines.push(line));
    const server = await startServer(services);
    const answer = await server.request(`/partner/v1/trpc/brands.list?input=${encodeURIComponent('secret-text')}`, {
      key: DEMO_KEYS.active,
    });
    expect(answer.status).toBe(400);
    const line = lines.map((text) => JSON.parse(text) as Record<string, unknown>).find((l) => l.msg === 'request');
    expect(line).toMatchObject({ status: 400, code: 'PARTNER_API_INVALID_PARAMETER', cause: expect.any(String) });
    expect(JSON.stringify(line?.cause)).not.toContain('secret');
  });
});
