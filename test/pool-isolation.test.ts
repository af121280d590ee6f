import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { DEMO_KEYS } from '../db/seed/demo';
import { DRIVER, openTestDatabase } from './support/database';
import { DEMO_BRAND, ENDPOINTS, loadSamples } from './support/endpoints';
import { expectErrorBody } from './support/errors';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy';
import { startServer, testServices } from './support/services';

// D-21 on the real PostgreSQL: the pool's size and the wait for a connection are bounded; a call that gets
// no connection in time answers the 500 envelope with Retry-After, long before its deadline; a locked
// table affects only the calls that read it; the directories and /readyz never queue behind request
// statements. Bounds are generous: they tell "failed fast" from "held to the deadline", nothing finer.
const DEADLINE_MS = 3_000;
const POOL_WAIT_MS = 300;
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

/** A request pool on the test database, as main.ts opens it, and a server on it. */
async function serve(size: number, url = database.url ?? '', poolWaitMs = POOL_WAIT_MS) {
  const handle = await openDatabase({
    url,
    maxConnections: size,
    poolWaitMs,
    statementTimeoutMs: DEADLINE_MS - 500,
    connectTimeoutMs: 500,
  });
  const services = testServices(handle.db, {
    REQUEST_DEADLINE_MS: String(DEADLINE_MS),
    DB_POOL_WAIT_MS: String(poolWaitMs),
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const server = await startServer(services, { deadlineMs: DEADLINE_MS });
  return { handle, server };
}

describe.skipIf(DRIVER !== 'postgres')('the request pool (D-21, PostgreSQL)', () => {
  it('exhausted by slow statements: the next call answers 500 with Retry-After long before its deadline', async () => {
    const { handle, server } = await serve(2);
    try {
      // Both connections held by slow statements outside any request.
      const slow = [1, 2].map(() => handle.db.execute(sql`SELECT pg_sleep(2)`).then(() => undefined));
      await expect.poll(() => handle.poolStats?.().inUse).toBe(2);
      const call = timed(server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active }));
      await expect.poll(() => handle.poolStats?.()).toEqual({ size: 2, inUse: 2, waiting: 1 });
      const { value, ms } = await call;
      expectErrorBody(value, 'PARTNER_API_INTERNAL_ERROR');
      expect(value.headers.get('retry-after')).toBe('1');
      expect(ms).toBeLessThan(FAST_MS);
      // Readiness is about reaching the database, not a free pool.
      expect((await server.request('/readyz')).status).toBe(200);
      await Promise.all(slow);
      expect((await server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active })).status).toBe(
        200,
      );
      expect(handle.poolStats?.()).toEqual({ size: 2, inUse: 0, waiting: 0 });
    } finally {
      await handle.close();
    }
  });

  it('a locked table fails only the calls that read it: every other endpoint and /readyz answer 200', async () => {
    // The other resources' calls share what the locked one leaves; a longer wait absorbs a busy machine.
    const { handle, server } = await serve(6, database.url, 2 * POOL_WAIT_MS);
    const holder = await openDatabase({ url: database.url ?? '', maxConnections: 1 });
    const readsReviews = ENDPOINTS.filter((endpoint) => endpoint.name.startsWith('reviews.'));
    const others = ENDPOINTS.filter((endpoint) => !endpoint.name.startsWith('reviews.'));
    expect(readsReviews.length).toBeGreaterThan(0);
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
          // More calls reading the locked table than the pool has connections, every round.
          for (let i = 0; i < 4; i++)
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
      // Answered while the lock held: the 500 envelope, within the deadline. (Calls still waiting when it
      // went may be served.)
      const during = answered.filter((answer) => answer.during);
      expect(during.length).toBeGreaterThan(0);
      for (const { value } of during) expectErrorBody(value, 'PARTNER_API_INTERNAL_ERROR');
      for (const { ms } of answered) expect(ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
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
      const { handle, server } = await serve(4, url.toString());
      const shops = `/partner/v1/brands/${DEMO_BRAND}/shops`;
      try {
        expect((await server.request(shops, { key: DEMO_KEYS.active })).status).toBe(200);
        proxy.pause();
        const answers = await Promise.all(
          Array.from({ length: 12 }, () => timed(server.request(shops, { key: DEMO_KEYS.active }))),
        );
        for (const { value, ms } of answers) {
          expectErrorBody(value, 'PARTNER_API_INTERNAL_ERROR');
          expect(ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
        }
        // Only the calls holding a connection (at most the lane's half of the pool) wait for the deadline.
        const fast = answers.filter(({ value, ms }) => ms < FAST_MS && value.headers.get('retry-after') === '1');
        expect(fast.length).toBeGreaterThanOrEqual(answers.length - 2);
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
    await expect.poll(() => handle.poolStats?.().inUse).toBe(1);
    const closing = await timed(handle.close());
    expect(closing.ms).toBeLessThan(5_000 - 1_000);
    await running;
  });
});
