import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../db/client';
import { PoolSlots } from '../db/pool-slots';
import { DEMO_KEYS } from '../db/seed/demo';
import { createLogger } from '../server/logger';
import { DRIVER, openTestDatabase } from './support/database';
import { DEMO_BRAND, ENDPOINTS, loadSamples } from './support/endpoints';
import { expectErrorBody } from './support/errors';
import { eventually } from './support/eventually';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy';
import { startServer, testServices } from './support/services';

// D-21 on the real PostgreSQL: the pool's size and the wait for a slot are bounded; a call that gets none
// in time answers the 500 envelope with Retry-After, long before its deadline; a locked table fails the
// calls that read it fast through lock_timeout; the key and brand lists and /readyz never queue behind
// request statements. "Fast" is told without a clock: the deadline is longer than a test may run, so a
// call held to it fails the test, and each failure is told by the cause its access line names.
const LONG_DEADLINE_MS = 120_000;
const POOL_WAIT_MS = 300;
const LOCK_TIMEOUT_MS = 300;
const POOL_BUSY = `no database connection free within ${POOL_WAIT_MS} ms`;

let database: DatabaseHandle & { url?: string };
beforeAll(async () => {
  database = await openTestDatabase();
  await loadSamples(testServices(database.db));
});

/** A request pool on the test database, as main.ts opens it, and a server on it whose log lines are kept. */
async function serve(size: number, url = database.url ?? '', deadlineMs = LONG_DEADLINE_MS) {
  const handle = await openDatabase({
    url,
    maxConnections: size,
    bounds: { statementTimeoutMs: deadlineMs - 500, lockTimeoutMs: LOCK_TIMEOUT_MS, poolWaitMs: POOL_WAIT_MS },
    connectTimeoutMs: 500,
  });
  const services = testServices(handle.db, {
    REQUEST_DEADLINE_MS: String(deadlineMs),
    SEND_TIMEOUT_MS: String(deadlineMs + 1_000),
  });
  const lines: Record<string, unknown>[] = [];
  services.log = createLogger('info', (line) => lines.push(JSON.parse(line)));
  await services.cache.start(); // as main.ts does before it listens
  const server = await startServer(services, { deadlineMs });
  const failures = () => lines.filter((line) => line.msg === 'request' && line.status === 500);
  return { handle, server, failures, services, slots: handle.slots ?? new PoolSlots(0, 0, 0) };
}

/** A promise and the function that settles it: work the test holds open until it says so. */
function held() {
  let release = () => {};
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

describe.skipIf(DRIVER !== 'postgres')('the request pool (D-21, PostgreSQL)', () => {
  it('exhausted by slow calls: the next call answers 500 with Retry-After while they still hold the pool', async () => {
    const { handle, server, failures, slots } = await serve(2);
    const slow = held();
    try {
      // Both slots held, as two slow calls would hold them, until the test lets them go.
      const holding = [1, 2].map(() => slots.run(() => slow.promise));
      expect(slots.stats()).toEqual({ size: 2, inUse: 2, waiting: 0 });
      const answer = await server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active });
      expectErrorBody(answer, 'PARTNER_API_INTERNAL_ERROR');
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(failures()).toMatchObject([{ cause: POOL_BUSY }]);
      // GET /brands reads the brand list in memory: it needs no slot.
      expect((await server.request('/partner/v1/brands', { key: DEMO_KEYS.active })).status).toBe(200);
      // Readiness is about reaching the database, not a free pool.
      expect((await server.request('/readyz')).status).toBe(200);
      expect(slots.stats()).toEqual({ size: 2, inUse: 2, waiting: 0 });
      slow.release();
      await Promise.all(holding);
      expect((await server.request(`/partner/v1/brands/${DEMO_BRAND}/shops`, { key: DEMO_KEYS.active })).status).toBe(
        200,
      );
      expect(slots.stats()).toEqual({ size: 2, inUse: 0, waiting: 0 });
    } finally {
      slow.release();
      await handle.close();
    }
  });

  it('a locked table fails the calls that read it fast (lock_timeout): the other endpoints and /readyz answer 200', async () => {
    const readsReviews = ENDPOINTS.filter((endpoint) => endpoint.name.startsWith('reviews.'));
    const others = ENDPOINTS.filter((endpoint) => !endpoint.name.startsWith('reviews.'));
    expect(readsReviews).toHaveLength(3);
    // Room for every call of a round at once: the others never wait for a slot a locked call holds.
    const perRound = 2 * readsReviews.length + others.length;
    const { handle, server, failures } = await serve(perRound);
    const holder = await openDatabase({ url: database.url ?? '', maxConnections: 1 });
    const call = (path: string) => server.request(path, { key: DEMO_KEYS.active });
    const lock = held();
    try {
      for (const endpoint of ENDPOINTS) expect((await call(endpoint.path(DEMO_BRAND))).status).toBe(200);
      const locked = held();
      const holding = holder.db.transaction(async (tx) => {
        await tx.execute(sql`LOCK TABLE reviews IN ACCESS EXCLUSIVE MODE`);
        locked.release();
        await lock.promise;
      });
      await locked.promise;
      // Every round answers while the lock is held: the test lets it go only after the last round.
      for (let round = 0; round < 3; round++) {
        const reviewCalls = readsReviews.flatMap((endpoint) => [1, 2].map(() => call(endpoint.path(DEMO_BRAND))));
        const answers = await Promise.all([
          ...others.map((endpoint) => call(endpoint.path(DEMO_BRAND))),
          call('/readyz'),
        ]);
        for (const answer of answers) expect(answer.status).toBe(200);
        for (const answer of await Promise.all(reviewCalls)) expectErrorBody(answer, 'PARTNER_API_INTERNAL_ERROR');
      }
      lock.release();
      await holding;
      expect(failures()).toHaveLength(3 * 2 * readsReviews.length);
      for (const line of failures()) expect(line.cause).toBe('the statement waited past lock_timeout');
      // The lock gone, the table's calls are served again.
      for (const endpoint of readsReviews) expect((await call(endpoint.path(DEMO_BRAND))).status).toBe(200);
    } finally {
      lock.release();
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

    it('holds at most the pool: the calls beyond it answer 500 with Retry-After, not held to their deadline', async () => {
      const url = new URL(database.url ?? '');
      url.port = String(proxy.port);
      // The calls holding a slot wait for this deadline; the others must not.
      const { handle, server, services, failures } = await serve(4, url.toString(), 5_000);
      const shops = `/partner/v1/brands/${DEMO_BRAND}/shops`;
      try {
        expect((await server.request(shops, { key: DEMO_KEYS.active })).status).toBe(200);
        // The key and brand are held and the cache confirmed just now: the calls need the pool alone.
        await services.cache.caughtUp();
        proxy.pause();
        const answers = await Promise.all(
          Array.from({ length: 12 }, () => server.request(shops, { key: DEMO_KEYS.active })),
        );
        for (const answer of answers) expectErrorBody(answer, 'PARTNER_API_INTERNAL_ERROR');
        // Only the calls holding a slot (the pool's 4) waited for the deadline; the rest found no slot.
        const busy = answers.filter((answer) => answer.headers.get('retry-after') === '1');
        expect(busy.length).toBeGreaterThanOrEqual(answers.length - 4);
        expect(failures().filter((line) => line.cause === POOL_BUSY).length).toBeGreaterThanOrEqual(answers.length - 4);
        proxy.restore();
        await eventually(
          async () => (await server.request(shops, { key: DEMO_KEYS.active })).status,
          (status) => status === 200,
        );
      } finally {
        proxy.restore();
        await handle.close();
      }
    });
  });

  it('close() returns while a statement runs, and takes the statement with it', async () => {
    const { handle } = await serve(2);
    // A statement that outlasts any test: close() waiting for it would fail this one.
    const running = handle.db.execute(sql`SELECT pg_sleep(3600)`).catch(() => undefined);
    const sleeping = sql`SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3600)'`;
    await eventually(
      () => database.rows(sleeping),
      (rows) => rows.length === 1,
    );
    await handle.close();
    await running;
    // The server notices a closed client only when the statement next writes: end it, as an operator would.
    await database.rows(
      sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3600)'`,
    );
  });
});
