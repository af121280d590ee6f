import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/client';
import { DEMO_KEYS } from '../db/seed/demo';
import { parseConfig } from '../server/config';
import { createLogger } from '../server/logger';
import { ERROR_MESSAGE, errorEnvelope } from '../server/trpc/errors';
import { createServices } from '../server/trpc/services';
import { NOW, openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { expectErrorBody } from './support/errors';
import { startServer, testServices } from './support/services';

let server: Awaited<ReturnType<typeof startServer>>;
let database: Awaited<ReturnType<typeof openTestDatabase>>;

beforeAll(async () => {
  database = await openTestDatabase();
  server = await startServer(testServices(database.db));
});

describe('unknown paths and methods (D-12)', () => {
  it.each([
    '/partner/v1',
    '/partner/v1/',
    '/partner/v2/brands',
    '/partner/v1/brand',
    `/partner/v1/brands/${DEMO_BRAND}/nothing`,
    `/partner/v1/brands/${DEMO_BRAND}/users/u-ch-001/extra`,
  ])('GET %s is 404 PARTNER_API_NOT_FOUND with or without a key', async (path) => {
    expectErrorBody(await server.request(path), 'PARTNER_API_NOT_FOUND');
    expectErrorBody(await server.request(path, { key: DEMO_KEYS.active }), 'PARTNER_API_NOT_FOUND');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])('%s on a path of the API is 404', async (method) => {
    expectErrorBody(
      await server.request('/partner/v1/brands', { method, key: DEMO_KEYS.active }),
      'PARTNER_API_NOT_FOUND',
    );
    expectErrorBody(
      await server.request(`/partner/v1/brands/${DEMO_BRAND}/users`, { method }),
      'PARTNER_API_NOT_FOUND',
    );
  });

  it('HEAD on a path of the API is 404 too', async () => {
    expect((await server.request('/partner/v1/brands', { method: 'HEAD', key: DEMO_KEYS.active })).status).toBe(404);
  });
});

describe('paths as partners write them', () => {
  it('decodes %-encoded path parameters like the tRPC transport receives them', async () => {
    const plain = await server.request(`/partner/v1/brands/${DEMO_BRAND}/users/u-ch-001`, { key: DEMO_KEYS.active });
    const encoded = await server.request('/partner/v1/brands/chicken%2Dhouse/users/u%2Dch%2D001', {
      key: DEMO_KEYS.active,
    });
    expect(plain.status).toBe(200);
    expect(encoded.body).toEqual(plain.body);
  });

  it.each([
    '/PARTNER/V1/BRANDS',
    '/partner/v1/Brands',
    '/partner/v1/brands/',
    `/partner/v1/brands/${DEMO_BRAND}/users/`,
  ])('answers %s, a wrong path, with 404 PARTNER_API_NOT_FOUND', async (path) => {
    expectErrorBody(await server.request(path, { key: DEMO_KEYS.active }), 'PARTNER_API_NOT_FOUND');
  });

  it('answers a code that cannot exist (NUL, %, too long) as not found, without asking the database', async () => {
    // an encoded slash is not a path separator: the segment names a brand that cannot exist
    for (const brand of ['a%00b', '%25', 'x'.repeat(65), 'chicken%2Fhouse']) {
      expectErrorBody(
        await server.request(`/partner/v1/brands/${brand}/users`, { key: DEMO_KEYS.active }),
        'PARTNER_API_BRAND_NOT_FOUND',
      );
    }
    const input = encodeURIComponent(JSON.stringify({ brand_code: 'a\u0000b' }));
    const trpc = await server.request(`/partner/v1/trpc/users.list?input=${input}`, { key: DEMO_KEYS.active });
    expect(trpc.status).toBe(404);
    expectErrorBody(
      await server.request(`/partner/v1/brands/${DEMO_BRAND}/reviews/R%00`, { key: DEMO_KEYS.active }),
      'PARTNER_API_REVIEW_NOT_FOUND',
    );
  });

  it('answers every error with the same content type as a success', async () => {
    const ok = await server.request('/partner/v1/brands', { key: DEMO_KEYS.active });
    const missing = await server.request('/nowhere');
    const refused = await server.request('/partner/v1/brands');
    expect(missing.headers.get('content-type')).toBe(ok.headers.get('content-type'));
    expect(refused.headers.get('content-type')).toBe(ok.headers.get('content-type'));
  });
});

describe('error bodies on REST (D-12)', () => {
  it.each([
    [
      'a parameter that broke its rule',
      '/partner/v1/brands?limit=echo-me',
      DEMO_KEYS.active,
      'PARTNER_API_INVALID_PARAMETER',
    ],
    ['a refused key', '/partner/v1/brands', DEMO_KEYS.expired, 'PARTNER_API_KEY_EXPIRED'],
    ['a missing brand', '/partner/v1/brands/no-such-brand/shops', DEMO_KEYS.active, 'PARTNER_API_BRAND_NOT_FOUND'],
  ] as const)('are the envelope and nothing else: %s', async (_case, path, key, code) => {
    const response = await fetch(`${server.base}${path}`, { headers: { 'x-partner-api-key': key } });
    expect(response.status).toBe(errorEnvelope(code).status_code);
    expect(await response.text()).toBe(JSON.stringify(errorEnvelope(code)));
  });
});

describe('requests the HTTP parser refuses (D-12)', () => {
  /** A raw request over a socket: fetch itself would refuse to send these. */
  async function raw(request: string) {
    const { connect } = await import('node:net');
    const url = new URL(server.base);
    return new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.end(request));
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk.toString();
      });
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it.each([
    ['a raw non-ASCII path', 'GET /partner/v1/brands/치킨 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['headers too large', `GET /partner/v1/brands HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ])('answers %s with the envelope and a request id', async (_label, request) => {
    const answer = await raw(request);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
    expect(answer.split('\r\n\r\n')[1]).toBe(JSON.stringify(errorEnvelope('PARTNER_API_INVALID_PARAMETER')));
  });
});

describe('request id (D-12)', () => {
  it('echoes a well-formed x-request-id', async () => {
    const response = await server.request('/partner/v1/brands', {
      key: DEMO_KEYS.active,
      headers: { 'x-request-id': 'abc.DEF:1-2_3' },
    });
    expect(response.headers.get('x-request-id')).toBe('abc.DEF:1-2_3');
  });

  it.each(['has space', 'x'.repeat(129), 'semi;colon'])('replaces %j with a new id', async (offered) => {
    const response = await server.request('/nowhere', { headers: { 'x-request-id': offered } });
    const id = response.headers.get('x-request-id');
    expect(id).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    expect(id).not.toBe(offered);
  });

  it('is on every response, errors included', async () => {
    for (const path of ['/partner/v1/brands', '/nowhere', '/healthz']) {
      expect((await server.request(path)).headers.get('x-request-id')).toBeTruthy();
    }
  });
});

describe('the generic 500 (partner guide § Errors, D-12)', () => {
  it('answers a database failure with the fixed envelope and logs the cause with the request id', async () => {
    const broken = await openDatabase({});
    await broken.close(); // every query now fails inside the driver
    const lines: string[] = [];
    const log = createLogger('debug', (line) => lines.push(line));
    const failing = await startServer(createServices(parseConfig({}), broken.db, log, () => NOW));
    const response = await failing.request('/partner/v1/brands', {
      key: DEMO_KEYS.active,
      headers: { 'x-request-id': 'trace-500' },
    });
    expectErrorBody(response, 'PARTNER_API_INTERNAL_ERROR');
    expect(JSON.stringify(response.body)).not.toMatch(/closed|stack|sql|select/i);
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request failed');
    expect(logged).toMatchObject({ requestId: 'trace-500', code: 'PARTNER_API_INTERNAL_ERROR' });
    expect(JSON.stringify(logged.error)).toMatch(/closed/i);
    expect(lines.join('\n')).not.toContain(DEMO_KEYS.active);
  });
});

describe('the tRPC transport (D-18)', () => {
  const input = encodeURIComponent(JSON.stringify({ brand_code: DEMO_BRAND }));

  it('answers a query with the same envelope as REST', async () => {
    const rest = await server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active });
    const trpc = await server.request(`/partner/v1/trpc/shops.list?input=${input}`, { key: DEMO_KEYS.active });
    expect(trpc.status).toBe(200);
    expect((trpc.body as { result: { data: unknown } }).result.data).toEqual(rest.body);
  });

  it('carries the partner code, status and fixed message in its errors, and no stack', async () => {
    const response = await server.request(`/partner/v1/trpc/shops.list?input=${input}`, { key: DEMO_KEYS.expired });
    expect(response.status).toBe(401);
    const error = (response.body as { error: { message: string; data: Record<string, unknown> } }).error;
    expect(error.message).toBe(ERROR_MESSAGE);
    expect(error.data.partner).toEqual({ status: 'PARTNER_API_KEY_EXPIRED', status_code: 401, message: ERROR_MESSAGE });
    expect(JSON.stringify(error)).not.toMatch(/stack/);
  });

  it('maps invalid input to PARTNER_API_INVALID_PARAMETER and unknown procedures to NOT_FOUND', async () => {
    const bad = encodeURIComponent(JSON.stringify({ brand_code: DEMO_BRAND, limit: 101 }));
    const invalid = await server.request(`/partner/v1/trpc/shops.list?input=${bad}`, { key: DEMO_KEYS.active });
    expect(invalid.status).toBe(400);
    expect(JSON.stringify(invalid.body)).toContain('PARTNER_API_INVALID_PARAMETER');
    const unknown = await server.request('/partner/v1/trpc/shops.delete', { key: DEMO_KEYS.active });
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(unknown.body)).toContain('"PARTNER_API_NOT_FOUND"');
  });

  it('answers a POST to a query with 404, like REST', async () => {
    const response = await server.request('/partner/v1/trpc/brands.list', { method: 'POST', key: DEMO_KEYS.active });
    expect(response.status).toBe(404);
  });
});

describe('health and docs (D-15, D-17)', () => {
  it('serves /healthz and /readyz without a key', async () => {
    expect((await server.request('/healthz')).body).toEqual({ status: 'ok' });
    expect((await server.request('/readyz')).body).toEqual({ status: 'ok' });
  });

  it('renders the document for people at /docs, offline', async () => {
    const page = await server.request('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(String(page.body)).toContain('/partner/v1/openapi.json');
    const bundle = await fetch(`${server.base}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    await bundle.arrayBuffer();
  });

  it('serves the OpenAPI document without a key, with every path and the error envelope', async () => {
    const response = await server.request('/partner/v1/openapi.json');
    expect(response.status).toBe(200);
    const document = response.body as unknown as {
      paths: Record<
        string,
        { get: { responses: Record<string, { content?: { 'application/json': { examples?: object } } }> } }
      >;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/partner/v1/brands', '/partner/v1/brands/{brand_code}/users/{user_code}']),
    );
    expect(document.components.schemas.PARTNER_API_USER_NOT_FOUND).toBeDefined();
    const responses = document.paths['/partner/v1/brands/{brand_code}/users/{user_code}']?.get.responses ?? {};
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404', '429', '500']));
    expect(Object.keys(responses['404']?.content?.['application/json'].examples ?? {})).toEqual([
      'PARTNER_API_BRAND_NOT_FOUND',
      'PARTNER_API_USER_NOT_FOUND',
      'PARTNER_API_NOT_FOUND',
    ]);
  });
});
