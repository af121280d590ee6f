import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { scheduleDailyAggregate } from '../server/aggregate-schedule';
import { createLogger, silentLogger } from '../server/logger';
import { ERROR_CATALOGUE } from '../server/trpc/errors';
import { enableMetrics, startMetricsServer } from '../server/trpc/metrics';
import { FallbackLimiter } from '../server/trpc/ratelimit/fallback';
import { MemorySlidingWindow } from '../server/trpc/ratelimit/sliding-window';
import type { Services } from '../server/trpc/services';
import { NOW, openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { eventually } from './support/eventually';
import { keptLog } from './support/kept-log';
import { startServer, testServices } from './support/services';

// D-22: what an on-call engineer reads, from the access line, the error line and /metrics.

type Line = Record<string, unknown>;
let database: Awaited<ReturnType<typeof openTestDatabase>>;
const kept = keptLog();
const lines = kept.lines;
const logged = (): Line[] => lines.map((line) => JSON.parse(line) as Line);
const accessLines = () => logged().filter((line) => line.msg === 'request');
let services: Services;
let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  database = await openTestDatabase();
  services = testServices(database.db);
  services.log = kept.log;
  server = await startServer(services);
});

/** The access line of the one request sent by `send`. */
async function accessLineOf(send: () => Promise<unknown>): Promise<Line> {
  const before = accessLines().length;
  await send();
  // The line is written when the response has finished, which may be after the client has it.
  await kept.until(() => accessLines().length > before);
  expect(accessLines()).toHaveLength(before + 1);
  return accessLines()[before] as Line;
}

const trpcInput = encodeURIComponent(JSON.stringify({ brand_code: DEMO_BRAND }));

describe('the access line (D-22)', () => {
  it('says who called what: operation, partner, key prefix (never the key), client, status, bytes, time', async () => {
    let length = 0;
    const line = await accessLineOf(async () => {
      const response = await fetch(`${server.base}/partner/v1/brands`, {
        headers: { 'x-partner-api-key': DEMO_KEYS.other },
      });
      length = (await response.arrayBuffer()).byteLength;
    });
    expect(line).toMatchObject({
      level: 'info',
      operation: 'brands.list',
      method: 'GET',
      path: '/partner/v1/brands',
      status: 200,
      partnerId: expect.any(Number),
      keyPrefix: `${DEMO_KEYS.other.slice(0, 16)}…`,
      client: expect.stringMatching(/127\.0\.0\.1$/),
      requestId: expect.any(String),
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
      durationMs: expect.any(Number),
    });
    // The body and the headers.
    expect(line.bytes).toBeGreaterThan(length);
    expect(line.bytes).toBeLessThan(length + 2_000);
    expect(JSON.stringify(line)).not.toContain(DEMO_KEYS.other);
  });

  it('labels a request no procedure took with a fixed route label, never its path', async () => {
    const unknown = await accessLineOf(() => server.request('/wp-admin/setup.php'));
    expect(unknown).toMatchObject({ operation: 'not_found', status: 404, code: 'PARTNER_API_NOT_FOUND' });
    const health = await accessLineOf(() => server.request('/healthz'));
    expect(health).toMatchObject({ operation: 'healthz', status: 200 });
    const batch = await accessLineOf(() =>
      server.request(
        `/partner/v1/trpc/shops.list,users.list?batch=1&input=${encodeURIComponent(
          JSON.stringify({ 0: { brand_code: DEMO_BRAND }, 1: { brand_code: DEMO_BRAND } }),
        )}`,
        { key: DEMO_KEYS.active },
      ),
    );
    expect(batch).toMatchObject({ operation: 'trpc.batch', status: 200 });
  });

  // Each refusal with its partner code and the reason of the rule that refused it, on both transports.
  const refusals = [
    { code: 'PARTNER_API_KEY_REQUIRED', status: 401, key: undefined },
    { code: 'PARTNER_API_KEY_INVALID', status: 401, key: 'pk_live_not_a_key_we_issued_00000' },
    { code: 'PARTNER_API_KEY_INACTIVE', status: 401, key: DEMO_KEYS.revoked },
    { code: 'PARTNER_API_KEY_EXPIRED', status: 401, key: DEMO_KEYS.expired },
    { code: 'PARTNER_API_FORBIDDEN', status: 403, key: DEMO_KEYS.suspended },
  ] as const;

  it.each(refusals)('REST and tRPC log $status $code with its reason', async ({ code, status, key }) => {
    for (const path of [`/partner/v1/brands/${DEMO_BRAND}/shops`, `/partner/v1/trpc/shops.list?input=${trpcInput}`]) {
      const line = await accessLineOf(() => server.request(path, { key }));
      expect(line).toMatchObject({ status, code, cause: ERROR_CATALOGUE[code].reason, operation: 'shops.list' });
      if (key) expect(JSON.stringify(line)).not.toContain(key);
    }
    if (code === 'PARTNER_API_KEY_INACTIVE') {
      // A key the service knows: its partner and prefix say whose integration still uses it.
      const line = accessLines().at(-1);
      expect(line).toMatchObject({ partnerId: expect.any(Number), keyPrefix: expect.stringMatching(/…$/) });
    }
  });

  it('REST and tRPC log a brand outside the partner as 404 with its reason', async () => {
    for (const path of [
      '/partner/v1/brands/no-such-brand/shops',
      `/partner/v1/trpc/shops.list?input=${encodeURIComponent(JSON.stringify({ brand_code: 'no-such-brand' }))}`,
    ]) {
      const line = await accessLineOf(() => server.request(path, { key: DEMO_KEYS.active }));
      expect(line).toMatchObject({
        status: 404,
        code: 'PARTNER_API_BRAND_NOT_FOUND',
        cause: ERROR_CATALOGUE.PARTNER_API_BRAND_NOT_FOUND.reason,
      });
    }
  });

  it('REST and tRPC log 429 with the spent limit as its reason, not an internal error', async () => {
    const limited = testServices(database.db, { RATE_LIMIT_PER_MINUTE: '1' });
    limited.log = services.log;
    const own = await startServer(limited);
    await own.request('/partner/v1/brands', { key: DEMO_KEYS.other });
    for (const path of ['/partner/v1/brands', '/partner/v1/trpc/brands.list']) {
      const line = await accessLineOf(() => own.request(path, { key: DEMO_KEYS.other }));
      expect(line).toMatchObject({
        status: 429,
        code: 'PARTNER_API_RATE_LIMITED',
        cause: ERROR_CATALOGUE.PARTNER_API_RATE_LIMITED.reason,
        partnerId: expect.any(Number),
      });
    }
    expect(JSON.stringify(accessLines())).not.toContain('Internal server error');
  });

  it('logs the trace id of a valid traceparent, and starts a new trace for an invalid one', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const valid = await accessLineOf(() =>
      server.request('/healthz', { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } }),
    );
    expect(valid.traceId).toBe(traceId);
    for (const invalid of [
      `00-${traceId.toUpperCase()}-00f067aa0ba902b7-01`,
      `ff-${traceId}-00f067aa0ba902b7-01`,
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId}-00f067aa0ba902b7-01-extra`,
    ]) {
      const line = await accessLineOf(() => server.request('/healthz', { headers: { traceparent: invalid } }));
      expect(line.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(line.traceId).not.toBe(traceId);
    }
  });
});

describe('W3C traceparent (D-22)', () => {
  it('reads a later version with more fields as version 00', async () => {
    const traceparent = (value: string) => ({ headers: { traceparent: value } });
    const later = await accessLineOf(() =>
      server.request('/healthz', traceparent(`01-${'a'.repeat(32)}-${'b'.repeat(16)}-01-later`)),
    );
    expect(later.traceId).toBe('a'.repeat(32));
    const malformed = await accessLineOf(() =>
      server.request('/healthz', traceparent(`00-${'c'.repeat(32)}-${'b'.repeat(16)}-0g`)),
    );
    expect(malformed.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(malformed.traceId).not.toBe('c'.repeat(32));
  });
});

describe('the error line (D-22)', () => {
  it('holds no SQL parameters or partner text, one stack, and stays small', async () => {
    const keyword = 'SecretKeyword4711';
    await database.db.execute(sql`ALTER TABLE reviews RENAME TO reviews_away`);
    try {
      const line = await accessLineOf(() =>
        server.request(`/partner/v1/brands/${DEMO_BRAND}/reviews?keyword=${keyword}`, { key: DEMO_KEYS.active }),
      );
      expect(line).toMatchObject({ status: 500, code: 'PARTNER_API_INTERNAL_ERROR', operation: 'reviews.list' });
    } finally {
      await database.db.execute(sql`ALTER TABLE reviews_away RENAME TO reviews`);
    }
    const errors = logged().filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    const [error] = errors as [Line];
    const text = JSON.stringify(error);
    expect(text).not.toContain(keyword);
    expect(text).not.toContain('u-ch-');
    expect(text).not.toMatch(/params/);
    expect(text.length).toBeLessThan(4_000);
    expect(text.match(/"stack"/g)).toHaveLength(1);
    // Enough to tell what failed: the statement (placeholders only) and PostgreSQL's code.
    expect(text).toContain('42P01');
    expect(text).toMatch(/"statement":"select/i);
  });

  it('stamps each line with the time it was written, to the millisecond (ISO 8601, UTC)', () => {
    const own: string[] = [];
    const log = createLogger('info', (line) => own.push(line));
    const times: [number, number][] = [];
    for (let i = 0; i < 5; i++) {
      const before = Date.now();
      log.info('tick');
      const after = Date.now();
      times.push([before, after]);
      // The next line is written in a later millisecond: a time kept from this one would be stale.
      while (Date.now() === after) {}
    }
    own.forEach((line, at) => {
      const { time } = JSON.parse(line) as { time: string };
      expect(time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const [before, after] = times[at] as [number, number];
      expect(Date.parse(time)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(time)).toBeLessThanOrEqual(after);
    });
  });

  it('caps any error: long messages, deep causes and long stacks', () => {
    let error: Error = new Error('x'.repeat(20_000));
    for (let depth = 0; depth < 20; depth++) error = new Error(`level ${depth} ${'y'.repeat(5_000)}`, { cause: error });
    const own: string[] = [];
    createLogger('error', (line) => own.push(line)).error({ error }, 'failed');
    expect(own[0]?.length).toBeLessThan(3_000);
    expect(own[0]?.match(/"stack"/g)).toHaveLength(1);
  });

  it('keeps PostgreSQL quoting a value out of its message', async () => {
    const userCode = 'u-secret-4711';
    const own: string[] = [];
    const log = createLogger('error', (line) => own.push(line));
    const failed = await database.db.execute(sql`SELECT ${userCode}::int`).catch((error: unknown) => error);
    log.error({ error: failed }, 'request failed');
    expect(own).toHaveLength(1);
    expect(own[0]).not.toContain(userCode);
    expect(own[0]).toContain('22P02');
  });
});

describe('the metrics listener (D-22)', () => {
  let metricsServer: Server;
  let metricsBase: string;
  const scrape = async () => (await fetch(`${metricsBase}/metrics`)).text();

  beforeAll(async () => {
    const registered = await enableMetrics();
    registered.observeDatabase({ slots: { stats: () => ({ size: 4, inUse: 3, waiting: 2 }) } });
    registered.observeCache(services.cache);
    registered.observeFeedStall({ heldBackSeconds: () => 2.5 });
    metricsServer = await startMetricsServer(registered.registry, { port: 0, host: '127.0.0.1', log: silentLogger });
    metricsBase = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => metricsServer.close(() => resolve())));

  it('serves the series on its own port, and the partner port does not', async () => {
    await server.request('/partner/v1/brands', { key: DEMO_KEYS.active });
    await server.request('/partner/v1/brands', { key: 'pk_live_unknown_key_for_metrics_0000' });
    const limited = new FallbackLimiter(
      { limit: () => Promise.reject(new Error('store down')) },
      new MemorySlidingWindow({ name: 'default', limit: 5, windowMs: 60_000 }),
      silentLogger,
    );
    await limited.limit('key:x');
    await limited.limit('key:x');
    const schedule = scheduleDailyAggregate({ db: database.db, log: silentLogger, now: () => NOW });
    await eventually(scrape, (text) => /partner_api_aggregate_runs_total\{outcome="\w+"\} 1/.test(text));
    await schedule.stop();

    const text = await scrape();
    for (const series of [
      /partner_api_http_request_duration_seconds_count\{operation="brands.list",status="200"\} [1-9]/,
      /partner_api_http_request_duration_seconds_bucket\{le="0.005",operation="brands.list",status="200"\}/,
      /partner_api_rate_limit_decisions_total\{decision="admitted"\} [1-9]/,
      /partner_api_refused_key_guard_decisions_total\{decision="admitted"\} [1-9]/,
      /partner_api_rate_limit_store_fallbacks_total\{reason="unavailable"\} 1/,
      /partner_api_rate_limit_store_fallbacks_total\{reason="cooldown"\} 1/,
      /partner_api_db_pool_size 4/,
      /partner_api_db_pool_in_use 3/,
      /partner_api_db_pool_waiting 2/,
      /^partner_api_cache_age_seconds \d/m,
      /^partner_api_feed_held_back_seconds 2.5$/m,
      /partner_api_aggregate_run_duration_seconds_count\{outcome="\w+"\} 1/,
      /nodejs_eventloop_lag_p99_seconds \d/,
      /process_cpu_user_seconds_total \d/,
      /process_resident_memory_bytes \d/,
    ])
      expect(text).toMatch(series);
    // No series names a path, a key or an address.
    expect(text).not.toContain('pk_');
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toMatch(/operation="\/|wp-admin/);

    // A driver without pool figures (PGlite) has no pool series rather than zeros.
    (await enableMetrics()).observeDatabase({});
    expect(await scrape()).not.toContain('partner_api_db_pool');

    expect((await server.request('/metrics')).status).toBe(404);
    expect((await fetch(`${metricsBase}/partner/v1/brands`)).status).toBe(404);
  });
});
