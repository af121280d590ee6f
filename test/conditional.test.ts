import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { parseConfig } from '../server/config';
import { openApiDocument } from '../server/http/openapi';
import { createLogger, silentLogger } from '../server/logger';
import { matches } from '../server/trpc/conditional';
import { connectSharedStore } from '../server/trpc/ratelimit/redis';
import { MemorySlidingWindow, policies } from '../server/trpc/ratelimit/sliding-window';
import { NOW, openTestDatabase } from './support/database';
import { DEMO_BRAND, ENDPOINTS, type Endpoint, loadSamples } from './support/endpoints';
import { expectErrorBody } from './support/errors';
import { startServer, testServices } from './support/services';

// D-27 (partner guide § Conditional requests), on every operation of the router (test/support/endpoints.ts
// reads them from it), over REST and the tRPC transport's single calls.

const key = DEMO_KEYS.active;
let database: Awaited<ReturnType<typeof openTestDatabase>>;
let services: ReturnType<typeof testServices>;
let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  database = await openTestDatabase();
  services = testServices(database.db);
  await loadSamples(services);
  server = await startServer(services);
});

/** The tRPC transport's path of the same call as `endpoint` on the demo brand (one call, as the SDK sends it). */
async function trpcPath(endpoint: Endpoint): Promise<string> {
  let path = '';
  const recorder = (names: string[]): unknown =>
    new Proxy(() => undefined, {
      get: (_target, name) => recorder([...names, String(name)]),
      apply: async (_target, _this, [input]) => {
        path = `/partner/v1/trpc/${names.join('.')}?input=${encodeURIComponent(JSON.stringify(input))}`;
      },
    });
  await endpoint.call(recorder([]) as object, DEMO_BRAND);
  return path;
}

/** The bytes of an answer as they leave the server: a fetch would hide a body sent after a 304. */
function rawGet(path: string, headers: Record<string, string>): Promise<string> {
  const url = new URL(server.base);
  const lines = [`GET ${path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe.each(ENDPOINTS)('$name', (endpoint) => {
  it('answers 200 with a weak ETag and Cache-Control: private, and 304 to an If-None-Match that matches', async () => {
    const path = endpoint.path(DEMO_BRAND);
    const first = await server.request(path, { key });
    expect(first.status).toBe(200);
    const tag = first.headers.get('etag') ?? '';
    expect(tag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get('cache-control')).toBe('private');

    const again = await server.request(path, { key, headers: { 'If-None-Match': tag } });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.get('etag')).toBe(tag);
    expect(again.headers.get('cache-control')).toBe('private');
    expect(again.headers.get('ratelimit-limit')).toBe(first.headers.get('ratelimit-limit'));
    expect(again.headers.get('ratelimit-policy')).toBe(first.headers.get('ratelimit-policy'));
  });

  it('does the same on the tRPC transport, with the tag of the same answer', async () => {
    const path = await trpcPath(endpoint);
    const first = await server.request(path, { key });
    expect(first.status).toBe(200);
    const tag = first.headers.get('etag') ?? '';
    expect(tag).toBe((await server.request(endpoint.path(DEMO_BRAND), { key })).headers.get('etag'));
    expect(first.headers.get('cache-control')).toBe('private');

    const again = await server.request(path, { key, headers: { 'If-None-Match': tag } });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.get('etag')).toBe(tag);
    expect(again.headers.get('cache-control')).toBe('private');
  });
});

describe('a 304 on the wire', () => {
  it.each([
    ['REST', () => `/partner/v1/brands/${DEMO_BRAND}/shops`],
    [
      'the tRPC transport',
      () => `/partner/v1/trpc/shops.list?input=${encodeURIComponent('{"brand_code":"chicken-house"}')}`,
    ],
  ])('over %s has the headers of its 200 and no body', async (_door, pathOf) => {
    const tag = (await server.request(pathOf(), { key })).headers.get('etag') ?? '';
    const answer = await rawGet(pathOf(), { 'x-partner-api-key': key, 'If-None-Match': tag });
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 304 /);
    expect(body).toBe('');
    const fields = new Map(
      (head ?? '')
        .split('\r\n')
        .slice(1)
        .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    expect(fields.get('etag')).toBe(tag);
    expect(fields.get('cache-control')).toBe('private');
    for (const name of [
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'ratelimit-policy',
      'x-request-id',
    ])
      expect(fields.has(name), name).toBe(true);
    expect(fields.has('content-length')).toBe(false);
    expect(fields.has('transfer-encoding')).toBe(false);
  });
});

describe('If-None-Match (RFC 9110 §13.1.2, weak comparison)', () => {
  const tag = 'W/"abc"';
  it.each([
    ['the same weak tag', 'W/"abc"', true],
    ['the tag without W/', '"abc"', true],
    ['a list holding it', 'W/"x", W/"abc" ,"y"', true],
    ['*', '*', true],
    ['another tag', 'W/"abd"', false],
    ['a list without it', 'W/"x", "y"', false],
    ['no header', undefined, false],
  ])('%s: %s', (_case, header, expected) => {
    expect(matches(header, tag)).toBe(expected);
  });

  it('answers a tag that does not match with the 200 and its body', async () => {
    const response = await server.request('/partner/v1/brands', { key, headers: { 'If-None-Match': 'W/"other"' } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'SUCCESS' });
    expect(response.headers.get('etag')).toMatch(/^W\//);
  });

  it('answers * with 304 when there is an answer', async () => {
    const response = await server.request('/partner/v1/brands', { key, headers: { 'If-None-Match': '*' } });
    expect(response.status).toBe(304);
  });
});

describe('errors', () => {
  it.each([
    ['400', '/partner/v1/brands?limit=500', key, 'PARTNER_API_INVALID_PARAMETER'],
    ['401', '/partner/v1/brands', DEMO_KEYS.expired, 'PARTNER_API_KEY_EXPIRED'],
    ['404', '/partner/v1/brands/no-such-brand/shops', key, 'PARTNER_API_BRAND_NOT_FOUND'],
  ] as const)('a %s carries no ETag and is never a 304', async (_status, path, errorKey, code) => {
    const response = await server.request(path, { key: errorKey, headers: { 'If-None-Match': '*' } });
    expectErrorBody(response, code);
    expect(response.headers.get('etag')).toBeNull();
  });

  it('a tRPC transport error carries no ETag', async () => {
    const input = encodeURIComponent(JSON.stringify({ brand_code: 'no-such-brand' }));
    const response = await server.request(`/partner/v1/trpc/shops.list?input=${input}`, {
      key,
      headers: { 'If-None-Match': '*' },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('etag')).toBeNull();
  });
});

it('leaves a tRPC batch alone: no ETag, and never a 304', async () => {
  const input = encodeURIComponent(JSON.stringify({ 0: {}, 1: { brand_code: DEMO_BRAND } }));
  const response = await server.request(`/partner/v1/trpc/brands.list,shops.list?batch=1&input=${input}`, {
    key,
    headers: { 'If-None-Match': '*' },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('etag')).toBeNull();
  expect(response.body).toHaveLength(2);
});

it('gives two partners different tags for the same answer', async () => {
  // A page past the end is the same empty answer to every partner.
  const path = '/partner/v1/brands?page=1000';
  const [mine, theirs] = [await server.request(path, { key }), await server.request(path, { key: DEMO_KEYS.other })];
  expect(mine.body).toEqual(theirs.body);
  expect(mine.headers.get('etag')).not.toBe(theirs.headers.get('etag'));
});

describe('the limit (D-13, D-14)', () => {
  it('admits and counts a conditional call like any other, and gives a 304 its unit back', async () => {
    const limited = await startServer(testServices(database.db, { RATE_LIMIT_PER_MINUTE: '3' }));
    const first = await limited.request('/partner/v1/brands', { key });
    expect(first.headers.get('ratelimit-remaining')).toBe('2');
    const headers = { 'If-None-Match': first.headers.get('etag') ?? '' };
    for (let i = 0; i < 5; i++) {
      const again = await limited.request('/partner/v1/brands', { key, headers });
      expect(again.status).toBe(304);
      expect(again.headers.get('ratelimit-remaining')).toBe('2');
    }
    await limited.request('/partner/v1/brands', { key });
    expect((await limited.request('/partner/v1/brands', { key, headers })).headers.get('ratelimit-remaining')).toBe(
      '1',
    );
    await limited.request('/partner/v1/brands', { key });
    // The limit is judged before the answer: a spent budget is 429, whatever If-None-Match says.
    expectErrorBody(await limited.request('/partner/v1/brands', { key, headers }), 'PARTNER_API_RATE_LIMITED');
  });

  it('gives back 1,000 304s a minute per key; past that a 304 keeps its unit', async () => {
    expect(policies(100).perKeyNotModified).toMatchObject({ limit: 1_000, windowMs: 60_000 });
    const budgeted = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '10' });
    budgeted.rateLimit.notModified = new MemorySlidingWindow({ name: 'not-modified', limit: 2, windowMs: 60_000 }, () =>
      NOW.getTime(),
    );
    const limited = await startServer(budgeted);
    const first = await limited.request('/partner/v1/brands', { key });
    const headers = { 'If-None-Match': first.headers.get('etag') ?? '' };
    const remaining = [];
    for (let i = 0; i < 4; i++) {
      const again = await limited.request('/partner/v1/brands', { key, headers });
      expect(again.status).toBe(304);
      remaining.push(again.headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual(['9', '9', '8', '7']);
    // Another key has its own budget of 304s.
    const other = await limited.request('/partner/v1/brands', { key: DEMO_KEYS.other });
    const otherAgain = await limited.request('/partner/v1/brands', {
      key: DEMO_KEYS.other,
      headers: { 'If-None-Match': other.headers.get('etag') ?? '' },
    });
    expect(otherAgain.headers.get('ratelimit-remaining')).toBe(other.headers.get('ratelimit-remaining'));
  });

  it('puts a 304 on the access line as a 304, with no error code', async () => {
    const lines: string[] = [];
    const logged = testServices(database.db);
    logged.log = createLogger('info', (line) => lines.push(line));
    const observed = await startServer(logged);
    const tag = (await observed.request('/partner/v1/brands', { key })).headers.get('etag') ?? '';
    await observed.request('/partner/v1/brands', { key, headers: { 'If-None-Match': tag } });
    const access = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');
    expect(access.at(-1)).toMatchObject({ operation: 'brands.list', status: 304 });
    expect(access.at(-1)?.code).toBeUndefined();
  });
});

it('is in the OpenAPI document on every operation: If-None-Match, the ETag of a 200 and the 304', () => {
  type Operation = { parameters: { name: string }[]; responses: Record<string, { headers?: object }> };
  const operations = Object.values(openApiDocument().paths ?? {}).map((item) => (item as { get: Operation }).get);
  expect(operations).toHaveLength(ENDPOINTS.length);
  for (const operation of operations) {
    expect(operation.parameters.map((parameter) => parameter.name)).toContain('If-None-Match');
    for (const status of ['200', '304']) {
      expect(operation.responses[status]?.headers).toHaveProperty('ETag');
      expect(operation.responses[status]?.headers).toHaveProperty('Cache-Control');
    }
  }
});

const REDIS_URL = process.env.TEST_REDIS_URL || undefined;
const fail = () => {
  throw new Error('the shared store takes no other policy');
};

describe.skipIf(!REDIS_URL)('two instances sharing Redis', () => {
  const prefix = `partner-api-test:${randomBytes(4).toString('hex')}`;
  const stores: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
  });

  async function instances(notModifiedLimit?: number) {
    const servers = [];
    for (let i = 0; i < 2; i++) {
      const policy = policies(10).perKey;
      const store = await connectSharedStore(parseConfig({ REDIS_URL: REDIS_URL ?? '' }), policy, silentLogger, prefix);
      if (!store) throw new Error('no store');
      stores.push(store);
      const shared = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '10' }, store.limiter);
      const budget = { name: 'not-modified', limit: notModifiedLimit ?? 0, windowMs: 60_000 };
      if (notModifiedLimit !== undefined) shared.rateLimit.notModified = store.limiter.withPolicy?.(budget) ?? fail();
      servers.push(await startServer(shared));
    }
    return servers as [Awaited<ReturnType<typeof startServer>>, Awaited<ReturnType<typeof startServer>>];
  }

  it('give a 304 its unit back in the shared count', async () => {
    const [one, two] = await instances();
    const first = await one.request('/partner/v1/brands', { key });
    const before = Number(first.headers.get('ratelimit-remaining'));
    const headers = { 'If-None-Match': first.headers.get('etag') ?? '' };
    const again = await two.request('/partner/v1/brands', { key, headers });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(Number(again.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(before);
    const next = await one.request('/partner/v1/brands', { key });
    expect(Number(next.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(before - 1);
  });

  it('share the budget of 304s', async () => {
    const [one, two] = await instances(2);
    // A key of its own in this store, so the earlier test's counts do not matter.
    const first = await one.request('/partner/v1/brands', { key: DEMO_KEYS.other });
    const headers = { 'If-None-Match': first.headers.get('etag') ?? '' };
    const remaining = [];
    for (const server of [one, two, one, two]) {
      const again = await server.request('/partner/v1/brands', { key: DEMO_KEYS.other, headers });
      expect(again.status).toBe(304);
      remaining.push(Number(again.headers.get('ratelimit-remaining')));
    }
    const start = Number(first.headers.get('ratelimit-remaining'));
    expect(remaining[0]).toBeGreaterThanOrEqual(start);
    expect(remaining[1]).toBeGreaterThanOrEqual(start);
    expect(remaining[3]).toBeLessThan(start);
  });
});
