import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { PoolSlots } from '../db/pool-slots';
import { DEMO_KEYS } from '../db/seed/demo';
import { createLogger } from '../server/logger';
import { DRIVER, openTestDatabase } from './support/database';
import { DEMO_BRAND, ENDPOINTS, loadSamples } from './support/endpoints';
import { expectErrorBody } from './support/errors';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy';
import { startServer, testServices } from './support/services';

// D-21 on the real PostgreSQL: the pool's size and the wait for a slot are bounded; a call that gets none
// in time answers the 500 envelope with Retry-After, long before its deadline; a locked table fails the
// calls that read it fast through lock_timeout; the key and brand lists and /readyz never queue behind
// request statements. Bounds are generous: they tell "failed fast" from "held to the deadline", nothing finer.
const DEADLINE_MS = 3_000;
const POOL_WAIT_MS = 300;
const LOCK_TIMEOUT_MS = 300;
/** Well under the deadline: what "fast" means here. */
const FAST_MS = DEADLINE_MS / 2;
const SLACK_MS = 1_500;

let database: DatabaseHandle & { url?: string };
beforeAll(async () => {
  database = await openTestDatabase();
  await loadSamples(testServices(database.db));
});

async function timed<T>(work: Promise<T>) {
  const started = Date.now();
  const value = await work;
  return { value, ms: Date.now() - started };
}

/** A request pool on the test database, as main.ts opens it, and a server on it whose log lines are kept. */
async function serve(size: number, url = database.url ?? '', poolWaitMs = POOL_WAIT_MS) {
  const handle = await openDatabase({
    url,
    maxConnections: size,
    bounds: { statementTimeoutMs: DEADLINE_MS - 500, lockTimeoutMs: LOCK_TIMEOUT_MS, poolWaitMs },
    connectTimeoutMs: 500,
  });
  const services = testServices(handle.db, { REQUEST_DEADLINE_MS: String(DEADLINE_MS) });
  const lines: Record<string, unknown>[] = [];
  services.log = createLogger('info', (line) => lines.push(JSON.parse(line)));
  await services.cache.start(); // as main.ts does before it listens
  const server = await startServer(services, { deadlineMs: DEADLINE_MS });
  return { handle, server, lines, services, slots: handle.slots ?? new PoolSlots(0, 0, 0) };
}

describe.skipIf(DRIVER !== 'postgres')('the request pool (D-21, PostgreSQL)', () => {
  it('exhausted by slow calls: the next call answers 500 with Retry-After long before its deadline', async () => {
    const { handle, server, lines, slots } = await serve(2);
    try {
      // Both slots held by slow work, as two calls would hold them.
      const slow = [1, 2].map(() => slots.run(() => handle.db.execute(sql`SELECT pg_sleep(2)`)).then(() => undefined));
      expect(slots.stats()).toEqual({ size: 2, inUse: 2, waiting: 0 });
      const call = timed(server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active }));
      await expect.poll(() => slots.stats()).toEqual({ size: 2, inUse: 2, waiting: 1 });
      const { value, ms } = await call;
      expectErrorBody(value, 'PARTNER_API_INTERNAL_ERROR');
      expect(value.headers.get('retry-after')).toBe('1');
      expect(ms).toBeLessThan(FAST_MS);
      expect(lines.find((line) => line.msg === 'request' && line.status === 500)).toMatchObject({
        cause: expect.stringContaining('no database connection free'),
      });
      // GET /brands reads the brand list in memory: it needs no slot.
      expect((await server.request('/partner/v1/brands', { key: DEMO_KEYS.active })).status).toBe(200);
      // Readiness is about reaching the database, not a free pool.
      expect((await server.request('/readyz')).status).toBe(200);
      await Promise.all(slow);
      expect((await server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active })).status).toBe(
        200,
      );
      expect(slots.stats()).toEqual({ size: 2, inUse: 0, waiting: 0 });
    } finally {
      await handle.close();
    }
  });

  it('a locked table fails the calls that read it fast (lock_timeout): the other endpoints and /readyz answer 200', async () => {
    // The calls reading the locked table hold their slots up to the lock timeout; the others take what is
    // left, and a longer wait absorbs a busy machine.
    const { handle, server, lines } = await serve(6, database.url, 2 * POOL_WAIT_MS);
    const holder = await openDatabase({ url: database.url ?? '', maxConnections: 1 });
    const readsReviews = ENDPOINTS.filter((endpoint) => endpoint.name.startsWith('reviews.'));
    const others = ENDPOINTS.filter((endpoint) => !endpoint.name.startsWith('reviews.'));
    expect(readsReviews).toHaveLength(3);
    const call = (path: string) => timed(server.request(path, { key: DEMO_KEYS.active }));
    try {
      for (const endpoint of ENDPOINTS) expect((await call(endpoint.path(DEMO_BRAND))).value.status).toBe(200);
      let release = () => {};
      let locked = () => {};
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const held = holder.db.transaction(async (tx) => {
        await tx.execute(sql`LOCK TABLE reviews IN ACCESS EXCLUSIVE MODE`);
        locked();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      await isLocked;
      let lockHeld = true;
      const reviewCalls: Promise<{ value: Awaited<ReturnType<typeof call>>['value']; ms: number; during: boolean }>[] =
        [];
      const until = Date.now() + 2 * DEADLINE_MS;
      let rounds = 0;
      try {
        while (Date.now() < until) {
          rounds += 1;
          // Calls reading the locked table, two thirds of the pool, every round.
          for (let i = 0; i < 2; i++)
            for (const endpoint of readsReviews)
              reviewCalls.push(call(endpoint.path(DEMO_BRAND)).then((answer) => ({ ...answer, during: lockHeld })));
          const answers = await Promise.all([
            ...others.map((endpoint) => call(endpoint.path(DEMO_BRAND))),
            call('/readyz'),
          ]);
          for (const { value, ms } of answers) {
            expect(value.status).toBe(200);
            expect(ms).toBeLessThan(FAST_MS);
          }
        }
      } finally {
        lockHeld = false;
        release();
        await held;
      }
      expect(rounds).toBeGreaterThan(1);
      const answered = await Promise.all(reviewCalls);
      // Answered while the lock held: the 500 envelope, fast, and the access line names the lock timeout.
      // (Calls still waiting when it went may be served.)
      const during = answered.filter((answer) => answer.during);
      expect(during.length).toBeGreaterThan(0);
      for (const { value } of during) expectErrorBody(value, 'PARTNER_API_INTERNAL_ERROR');
      for (const { ms } of answered) expect(ms).toBeLessThan(FAST_MS);
      const failed = lines.filter((line) => line.msg === 'request' && line.status === 500);
      expect(failed.length).toBeGreaterThan(0);
      for (const line of failed) expect(line.cause).toBe('the statement waited past lock_timeout');
      // The lock gone, the table's calls are served again.
      for (const endpoint of readsReviews) expect((await call(endpoint.path(DEMO_BRAND))).value.status).toBe(200);
    } finally {
      await holder.close();
      await handle.close();
    }
  });

  describe('a stalled database', () => {
    let proxy: FaultProxy;
    beforeAll(async () => {
      const url = new URL(database.url ?? '');
      proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
    });
    afterAll(async () => {
      await proxy.close();
    });

    it('holds at most the pool: the calls beyond it answer 500 with Retry-After long before their deadline', async () => {
      const url = new URL(database.url ?? '');
      url.port = String(proxy.port);
      const { handle, server, services } = await serve(4, url.toString());
      const shops = `/partner/v1/brands/${DEMO_BRAND}/shops`;
      try {
        expect((await server.request(shops, { key: DEMO_KEYS.active })).status).toBe(200);
        // The key and brand are held and the cache confirmed just now: the calls need the pool alone.
        await services.cache.caughtUp();
        proxy.pause();
        const answers = await Promise.all(
          Array.from({ length: 12 }, () => timed(server.request(shops, { key: DEMO_KEYS.active }))),
        );
        for (const { value, ms } of answers) {
          expectErrorBody(value, 'PARTNER_API_INTERNAL_ERROR');
          expect(ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
        }
        // Only the calls holding a slot (the pool's 4) wait for the deadline.
        const fast = answers.filter(({ value, ms }) => ms < FAST_MS && value.headers.get('retry-after') === '1');
        expect(fast.length).toBeGreaterThanOrEqual(answers.length - 4);
        proxy.restore();
        await expect
          .poll(async () => (await server.request(shops, { key: DEMO_KEYS.active })).status, { timeout: 15_000 })
          .toBe(200);
      } finally {
        proxy.restore();
        await handle.close();
      }
    });
  });

  it('close() returns within its bound while a statement runs', async () => {
    const { handle } = await serve(2);
    const running = handle.db.execute(sql`SELECT pg_sleep(5)`).catch(() => undefined);
    await expect
      .poll(
        async () =>
          (await database.rows(sql`SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(5)'`)).length,
      )
      .toBe(1);
    const closing = await timed(handle.close());
    expect(closing.ms).toBeLessThan(5_000 - 1_000);
    await running;
  });
});
