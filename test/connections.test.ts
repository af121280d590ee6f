import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import express from 'express';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { createCaller } from '../routers';
import { parseConfig } from '../server/config';
import { createHttpServer } from '../server/http/server';
import { createRequestContext } from '../server/trpc/context';
import { errorEnvelope } from '../server/trpc/errors';
import { openTestDatabase } from './support/database';
import { expectPartnerError } from './support/errors';
import { eventually } from './support/eventually';
import { startServer, testServices } from './support/services';

// D-21: connections are bounded in number and time, so one client cannot stop another being served;
// the docs are cached, compressed and cost no memory per unread response; D-12: the edges of HTTP
// answer in the envelope or are closed on purpose.
let database: Awaited<ReturnType<typeof openTestDatabase>>;
beforeAll(async () => {
  database = await openTestDatabase();
});

type Outcome = { text: string; error?: string; bytes: number };

/** A raw connection (optionally from another loopback address) that sends `request` and reads to the end. */
function exchange(port: number, request: string | Buffer, localAddress = '127.0.0.1') {
  return new Promise<Outcome>((resolve) => {
    const outcome: Outcome = { text: '', bytes: 0 };
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      outcome.text += chunk.toString('latin1');
      outcome.bytes += chunk.length;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      outcome.error = error.code;
    });
    socket.on('close', () => resolve(outcome));
  });
}

/** A connection that is open (accepted by the kernel) and sends nothing; resolves once connected. */
function idleConnection(port: number, localAddress = '127.0.0.1') {
  return new Promise<net.Socket & { closedAt?: number }>((resolve) => {
    const socket: net.Socket & { closedAt?: number } = net.connect({ port, host: '127.0.0.1', localAddress }, () =>
      resolve(socket),
    );
    socket.on('error', () => undefined);
    socket.on('close', () => {
      socket.closedAt = Date.now();
    });
  });
}

const portOf = (base: string) => Number(new URL(base).port);

/** GET over a fresh connection from `localAddress`: the status, or the error it ended with. */
function get(base: string, path: string, localAddress = '127.0.0.1') {
  return new Promise<number | string>((resolve) => {
    const request = http.get(`${base}${path}`, { localAddress, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('socket bounds, from Node’s own server options (D-21)', () => {
  it('keeps idle keep-alive connections 65 s, wants a request’s headers within 10 s and checks every second', () => {
    const server = createHttpServer(express(), testServices(database.db).log);
    const config = parseConfig({});
    expect(server.keepAliveTimeout).toBe(65_000);
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(config.HEADERS_TIMEOUT_MS);
    expect(server.maxConnections).toBe(config.MAX_CONNECTIONS);
    expect(server.timeout).toBe(config.SEND_TIMEOUT_MS);
    expect(() => parseConfig({ SEND_TIMEOUT_MS: '5000', REQUEST_DEADLINE_MS: '10000' })).toThrow(/SEND_TIMEOUT_MS/);
  });

  it('closes a silent connection and a half-sent request by the headers timeout; an idle keep-alive one stays', async () => {
    const { base, server } = await startServer(testServices(database.db), {}, { HEADERS_TIMEOUT_MS: 1_000 });
    const silent = await idleConnection(portOf(base));
    const partial = await idleConnection(portOf(base));
    partial.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    // A connection that made its request is idle between requests: the keep-alive timer's alone to close.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const status = await new Promise<number | undefined>((resolve) =>
      http.get(`${base}/healthz`, { agent }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      }),
    );
    expect(status).toBe(200);
    await eventually(
      () => silent.closedAt && partial.closedAt,
      (closed) => closed !== undefined,
    );
    // Well past the headers timeout and its checks, the idle keep-alive connection is still open.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const [kept] = Object.values(agent.freeSockets).flat();
    expect(kept?.destroyed).toBe(false);
    expect(await new Promise((resolve) => server.getConnections((_e, n) => resolve(n)))).toBe(1);
    agent.destroy();
  });

  it('closes connections over the process cap at once', async () => {
    const { base } = await startServer(testServices(database.db), {}, { MAX_CONNECTIONS: 3 });
    const port = portOf(base);
    const held = await Promise.all(Array.from({ length: 3 }, (_, i) => idleConnection(port, `127.0.0.${i + 1}`)));
    const over = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', '127.0.0.9');
    expect(over.text).toBe('');
    for (const socket of held) socket.destroy();
    await eventually(
      () => get(base, '/healthz', '127.0.0.9'),
      (status) => status === 200,
    );
  });
});

/** A full collection, so a memory reading is what is retained, not garbage other tests left. */
function collectGarbage() {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Bytes the kernel holds unsent on the server's side of its connections (Linux; undefined elsewhere). */
function kernelSendQueue(port: number): number | undefined {
  if (!existsSync('/proc/net/tcp')) return undefined;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number.parseInt(fields[1]?.split(':')[1] ?? '', 16) === port)
    .reduce((sum, fields) => sum + Number.parseInt(fields[4]?.split(':')[0] ?? '0', 16), 0);
}

describe('unread responses (D-21)', () => {
  const bundle = '/docs/assets/swagger-ui-bundle.js';

  it('holds no copy per client that does not read, serves others meanwhile, and frees what the kernel holds', async () => {
    const { base, server } = await startServer(
      testServices(database.db),
      {},
      { SEND_TIMEOUT_MS: 2_000, KEEP_ALIVE_TIMEOUT_MS: 2_000 },
    );
    const port = portOf(base);
    const connections = () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
    // Each connection's close, as an event: the whole read's connection ends before the unread ones start.
    const closed: Promise<unknown>[] = [];
    const track = (socket: net.Socket) => closed.push(once(socket, 'close'));
    server.on('connection', track);
    const whole = await fetch(`${base}${bundle}`, { headers: { 'accept-encoding': 'identity' } });
    const size = (await whole.arrayBuffer()).byteLength;
    expect(size).toBeGreaterThan(1_000_000);
    await Promise.all(closed);
    server.off('connection', track);
    expect(await connections()).toBe(0);
    const memory = () => {
      collectGarbage();
      const usage = process.memoryUsage();
      return usage.heapUsed + usage.external; // external includes the array buffers
    };
    let answered = 0;
    server.on('request', (req: http.IncomingMessage) => {
      if (req.url === bundle) answered += 1;
    });
    const before = memory();
    const clients = 100;
    const stalled = await Promise.all(
      Array.from({ length: clients }, async () => {
        const socket = await idleConnection(port);
        socket.pause(); // never reads
        socket.write(`GET ${bundle} HTTP/1.1\r\nHost: x\r\n\r\n`);
        return socket;
      }),
    );
    await eventually(
      () => answered,
      (count) => count === clients,
    );
    // Every response is on its way, all from one shared buffer: far less than one copy per client.
    const grown = memory() - before;
    expect(grown).toBeLessThan((clients * size) / 5);
    expect(await get(base, '/healthz')).toBe(200);
    // A response not taken within the send timeout, or one the kernel took whole and then idle for the
    // keep-alive timeout: the connection is closed, and the kernel's copy with it.
    await eventually(connections, (count) => count === 0, 200);
    const queued = kernelSendQueue(port);
    if (queued !== undefined) expect(queued).toBe(0);
    for (const socket of stalled) socket.destroy();
  });

  it('keeps a small answer’s connection for the keep-alive timeout, not the send timeout', async () => {
    const { base, server } = await startServer(testServices(database.db), {}, { SEND_TIMEOUT_MS: 1_000 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    await new Promise<void>((resolve) =>
      http.get(`${base}/docs`, { agent }, (response) => response.resume().on('end', resolve)),
    );
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(await new Promise((resolve) => server.getConnections((_e, n) => resolve(n)))).toBe(1);
    agent.destroy();
  });
});

describe('docs and the OpenAPI document: caching and compression (D-21)', () => {
  it.each([
    '/docs',
    '/docs/sdk',
    '/docs/reference',
    '/docs/assets/swagger-ui.css',
    '/docs/assets/swagger-ui-bundle.js',
    '/partner/v1/openapi.json',
  ])('%s carries validators, answers 304 when current and gzip when accepted', async (path) => {
    const { base } = await startServer(testServices(database.db));
    const plain = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    const identity = Buffer.from(await plain.arrayBuffer());
    const etag = plain.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(Date.parse(plain.headers.get('last-modified') ?? '')).not.toBeNaN();
    expect(plain.headers.get('cache-control')).toMatch(/no-cache|max-age=\d+/);
    expect(plain.headers.get('vary')).toMatch(/accept-encoding/i);
    expect(plain.headers.get('content-encoding')).toBeNull();

    const current = await fetch(`${base}${path}`, {
      headers: { 'accept-encoding': 'identity', 'if-none-match': etag ?? '' },
    });
    expect(current.status).toBe(304);
    expect((await current.arrayBuffer()).byteLength).toBe(0);
    const since = await fetch(`${base}${path}`, {
      headers: { 'accept-encoding': 'identity', 'if-modified-since': plain.headers.get('last-modified') ?? '' },
    });
    expect(since.status).toBe(304);

    // fetch would decode gzip itself: a raw GET shows what is sent.
    const zipped = await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve) =>
      http.get(`${base}${path}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
      }),
    );
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.body.length).toBeLessThan(identity.length);
    expect(gunzipSync(zipped.body).equals(identity)).toBe(true);
    expect(zipped.headers.etag).not.toBe(etag);
  });
});

describe('edges of HTTP, in the envelope (D-12)', () => {
  const envelopeOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

  it('refuses an expectation other than 100-continue with the 400 envelope and a request id', async () => {
    const { base } = await startServer(testServices(database.db));
    const answer = await exchange(
      portOf(base),
      'GET /partner/v1/brands HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nConnection: close\r\n\r\n',
    );
    expect(answer.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer.text.toLowerCase()).toMatch(/\r\nx-request-id: [\w-]+\r\n/);
    expect(envelopeOf(answer.text)).toEqual(errorEnvelope('PARTNER_API_INVALID_PARAMETER'));
  });

  it('answers CONNECT with the 404 envelope and a request id, then closes', async () => {
    const { base } = await startServer(testServices(database.db));
    const answer = await exchange(portOf(base), 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(answer.text).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer.text.toLowerCase()).toMatch(/\r\nx-request-id: [\w-]+\r\n/);
    expect(envelopeOf(answer.text)).toEqual(errorEnvelope('PARTNER_API_NOT_FOUND'));
  });

  it.each([
    '/DOCS',
    '/Docs',
    '/docs/SDK',
    '/DOCS/reference',
    '/docs/Reference',
    '/docs/ASSETS/swagger-ui.css',
    '/HEALTHZ',
    '/healthz/',
    '/Readyz',
    '/partner/v1/OPENAPI.json',
    '/Partner/v1/openapi.json',
  ])('does not take %s for another spelling of a path: 404 envelope', async (path) => {
    const { request } = await startServer(testServices(database.db));
    const answer = await request(path);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual(errorEnvelope('PARTNER_API_NOT_FOUND'));
  });

  it('refuses a key with a character outside the key alphabet like an unknown key', async () => {
    const services = testServices(database.db);
    const call = (apiKey: string) =>
      createCaller(createRequestContext(services, { apiKey, clientAddress: '198.51.100.9' })).brands.list({});
    for (const apiKey of [`${DEMO_KEYS.active}\u00a0`, `\u00a0${DEMO_KEYS.active}`, `${DEMO_KEYS.active}\u200b`])
      await expectPartnerError(call(apiKey), 'PARTNER_API_KEY_INVALID');
    // HTTP's optional whitespace is not part of the value.
    expect((await call(` ${DEMO_KEYS.active}\t`)).status).toBe('SUCCESS');

    // Over HTTP, as a client would send it (the header's bytes as Latin-1).
    const { base } = await startServer(services);
    const answer = await exchange(
      portOf(base),
      Buffer.from(
        `GET /partner/v1/brands HTTP/1.1\r\nHost: x\r\nx-partner-api-key: ${DEMO_KEYS.active}\u00a0\r\nConnection: close\r\n\r\n`,
        'latin1',
      ),
    );
    expect(answer.text).toMatch(/^HTTP\/1\.1 401 /);
    expect(envelopeOf(answer.text)).toEqual(errorEnvelope('PARTNER_API_KEY_INVALID'));
  });
});

describe('readiness while draining (D-20)', () => {
  it('answers /readyz 503 from the stop signal on, while the database is fine', async () => {
    let draining = false;
    const { request } = await startServer(testServices(database.db), { draining: () => draining });
    expect((await request('/readyz')).status).toBe(200);
    draining = true;
    const answer = await request('/readyz');
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ status: 'draining' });
    expect((await request('/healthz')).status).toBe(200);
  });
});
