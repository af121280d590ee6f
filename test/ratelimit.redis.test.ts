import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from '@upstash/redis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { parseConfig } from '../server/config';
import { createLogger } from '../server/logger';
import { FallbackLimiter } from '../server/trpc/ratelimit/fallback';
import { connectSharedStore, nodeRedisRequester, RedisSlidingWindow } from '../server/trpc/ratelimit/redis';
import type { RateLimitDecision, RateLimiter } from '../server/trpc/ratelimit/sliding-window';
import { MemorySlidingWindow } from '../server/trpc/ratelimit/sliding-window';
import { openTestDatabase } from './support/database';
import { expectErrorBody } from './support/errors';
import { eventually } from './support/eventually';
import { type OwnRedis, REDIS_SERVER_INSTALLED, startOwnRedis } from './support/redis-server';
import { built, listeningLine, spawnLogged } from './support/server-process';
import { startServer, testServices } from './support/services';

// D-14: one limit shared by every instance through Redis, and an in-process fallback when it is slow or
// down. The shared-store tests run against the real Redis when TEST_REDIS_URL is set (CI sets it).
const REDIS_URL = process.env.TEST_REDIS_URL || undefined;
const policy = (limit: number) => ({ name: 'default', limit, windowMs: 60_000 });

describe('fallback when the store is slow or down (D-14)', () => {
  const never: RateLimiter = { limit: () => new Promise<RateLimitDecision>(() => {}) };
  const failing: RateLimiter = { limit: () => Promise.reject(new Error('ECONNREFUSED')) };

  it('waits at most 250 ms, then answers from the in-process limiter and logs the outage once', async () => {
    const lines: string[] = [];
    const limiter = new FallbackLimiter(
      never,
      new MemorySlidingWindow(policy(2)),
      createLogger('warn', (line) => lines.push(line)),
    );
    // On the fake clock: no answer before 250 ms, then the in-process limiter's once the I/O poll the expiry
    // waits for ran (an immediate, which the fake clock runs a millisecond on).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'] });
    try {
      const started = Date.now();
      let answered = false;
      const first = limiter.limit('k').finally(() => {
        answered = true;
      });
      await vi.advanceTimersByTimeAsync(249);
      expect(answered).toBe(false);
      await vi.runAllTimersAsync();
      expect(await first).toMatchObject({ success: true, limit: 2, remaining: 1 });
      expect(Date.now() - started).toBeLessThanOrEqual(251);
    } finally {
      vi.useRealTimers();
    }
    expect(await limiter.limit('k')).toMatchObject({ success: true, remaining: 0 });
    expect(await limiter.limit('k')).toMatchObject({ success: false }); // the local limit still holds
    expect(lines.filter((line) => line.includes('rate-limit store unavailable'))).toHaveLength(1);
  });

  it('leaves the store alone for a cooldown after a failure, then uses it again once it answers', async () => {
    let down = true;
    let asked = 0;
    const store: RateLimiter = {
      limit: (id) => {
        asked++;
        return down ? failing.limit(id) : Promise.resolve({ success: true, limit: 9, remaining: 8, reset: 0 });
      },
    };
    let now = 0;
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line));
    const limiter = new FallbackLimiter(
      store,
      new MemorySlidingWindow(policy(5), () => now),
      log,
      250,
      5_000,
      () => now,
    );
    expect((await limiter.limit('k')).limit).toBe(5);
    down = false;
    expect((await limiter.limit('k')).limit).toBe(5); // within the cooldown: not asked
    expect(asked).toBe(1);
    now += 5_000;
    expect((await limiter.limit('k')).limit).toBe(9);
    expect(lines.some((line) => line.includes('answering again'))).toBe(true);
  });

  it('refunds a call the store counted after its answer was abandoned', async () => {
    const refunded: string[] = [];
    let refundedOne: () => void = () => {};
    const refund = new Promise<void>((resolve) => {
      refundedOne = resolve;
    });
    let land: (decision: RateLimitDecision) => void = () => {};
    const late: RateLimiter = {
      limit: () =>
        new Promise<RateLimitDecision>((resolve) => {
          land = resolve;
        }),
      refund: async (id) => {
        refunded.push(id);
        refundedOne();
      },
    };
    const limiter = new FallbackLimiter(late, new MemorySlidingWindow(policy(5)), createLogger('silent'), 20);
    expect((await limiter.limit('k')).limit).toBe(5); // answered locally after 20 ms
    land({ success: true, limit: 9, remaining: 8, reset: 0 });
    await refund;
    expect(refunded).toEqual(['k']);
  });

  it('gives a refund back to the store that counted the call', async () => {
    const refunded: string[] = [];
    const shared: RateLimiter = {
      limit: async () => ({ success: true, limit: 3, remaining: 2, reset: 0, window: 7 }),
      refund: async (id, _calls, counted) => {
        refunded.push(`${id} of window ${counted?.window}`);
      },
    };
    const local = new MemorySlidingWindow(policy(3));
    const limiter = new FallbackLimiter(shared, local, createLogger('silent'));
    await limiter.refund('k', 1, await limiter.limit('k'));
    expect(refunded).toEqual(['k of window 7']);
    // A decision of the in-process limiter (the store was down) goes back to it.
    await limiter.refund('k', 1, await local.limit('k'));
    expect(refunded).toHaveLength(1);
    expect((await local.limit('k')).remaining).toBe(2);
  });

  it('starts with a Redis that is not there, says so, and names its host and port (never the password)', async () => {
    const lines: string[] = [];
    const log = createLogger('debug', (line) => lines.push(line));
    const store = await connectSharedStore(
      parseConfig({ REDIS_URL: 'redis://operator:secret@127.0.0.1:1' }),
      policy(3),
      log,
    );
    if (!store) throw new Error('no store');
    expect(store).toMatchObject({ status: 'unreachable, limiting in process', at: '127.0.0.1:1' });
    const limiter = new FallbackLimiter(store.limiter, new MemorySlidingWindow(policy(3)), log);
    expect(await limiter.limit('k')).toMatchObject({ success: true, limit: 3, remaining: 2 });
    const warning = lines.map((line) => JSON.parse(line)).find((line) => line.msg.includes('store unavailable'));
    expect(warning).toMatchObject({ level: 'warn', store: '127.0.0.1:1' });
    expect(lines.join('\n')).not.toContain('secret');
    await store.close();
  });
});

describe.skipIf(!REDIS_URL)('the shared store on Redis', () => {
  const clients: ReturnType<typeof createClient>[] = [];
  const prefix = `partner-api-test:${randomBytes(4).toString('hex')}`;

  /** A new connection, as another instance of the service would have. */
  async function instance(limit: number) {
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    clients.push(client);
    return new RedisSlidingWindow(new Redis(nodeRedisRequester(client)), policy(limit), prefix);
  }

  afterAll(async () => {
    for (const client of clients) await client.quit();
  });

  it('counts one budget across instances and says when the next call is accepted', async () => {
    const [a, b] = [await instance(5), await instance(5)];
    const id = `key:${randomBytes(4).toString('hex')}`;
    const decisions = [await a.limit(id), await b.limit(id), await a.limit(id), await b.limit(id)];
    expect(decisions.map((decision) => decision.remaining)).toEqual([4, 3, 2, 1]);
    const last = await a.limit(id);
    expect(last).toMatchObject({ success: true, remaining: 0 });
    const refused = await b.limit(id);
    expect(refused).toMatchObject({ success: false, remaining: 0 });
    expect(refused.retryAt).toBeGreaterThan(Date.now());
    expect(refused.retryAt).toBeLessThanOrEqual(Date.now() + 120_000);
    expect(last.retryAt).toBeDefined();
  });

  it('gives a refunded call back to the shared budget', async () => {
    const limiter = await instance(5);
    const id = `key:${randomBytes(4).toString('hex')}`;
    await limiter.limit(id);
    await limiter.limit(id);
    await limiter.refund(id);
    expect((await limiter.limit(id)).remaining).toBe(3);
  });

  describe('through HTTP, two instances of the service', () => {
    let database: Awaited<ReturnType<typeof openTestDatabase>>;
    beforeAll(async () => {
      database = await openTestDatabase();
    });

    const stores: { close(): Promise<void> }[] = [];
    afterAll(async () => {
      for (const store of stores) await store.close();
    });

    it('share one limit per key', async () => {
      const servers = [];
      for (let i = 0; i < 2; i++) {
        const config = parseConfig({ REDIS_URL: REDIS_URL ?? '' });
        const store = await connectSharedStore(config, policy(3), createLogger('silent'), `${prefix}:http`);
        if (!store) throw new Error('no store');
        stores.push(store);
        servers.push(await startServer(testServices(database.db, { RATE_LIMIT_PER_MINUTE: '3' }, store.limiter)));
      }
      const [one, two] = servers;
      if (!one || !two) throw new Error('servers missing');
      const key = DEMO_KEYS.active;
      const answers = [];
      for (const server of [one, two, one]) answers.push(await server.request('/partner/v1/brands', { key }));
      expect(answers.map((answer) => answer.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0']);
      expectErrorBody(await two.request('/partner/v1/brands', { key }), 'PARTNER_API_RATE_LIMITED');
    });
  });
});

// SCRIPT FLUSH empties the script cache of every client of a Redis: only on one the test started itself.
describe('the Redis a test file flushes', () => {
  it('is one it started itself (startOwnRedis), never the one the suite is given', () => {
    const flushes = /['"](FLUSHALL|FLUSHDB)['"]|['"]SCRIPT['"],\s*['"]FLUSH['"]|\.(flushAll|flushDb|scriptFlush)\(/i;
    const flushing = readdirSync(import.meta.dirname, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(path.join(import.meta.dirname, file), 'utf8'))
      .filter((text) => flushes.test(text));
    expect(flushing.length).toBeGreaterThan(0);
    for (const text of flushing) expect(text).toContain('startOwnRedis()');
  });
});

describe.skipIf(!REDIS_SERVER_INSTALLED)('the shared store on a Redis of its own', () => {
  let redis: OwnRedis;
  beforeAll(async () => {
    redis = await startOwnRedis();
  });
  afterAll(() => redis?.stop());

  it('is reported shared once Redis answered, with its host and port', async () => {
    const store = await connectSharedStore(parseConfig({ REDIS_URL: redis.url }), policy(5), createLogger('silent'));
    expect(store).toMatchObject({ status: 'shared', at: new URL(redis.url).host });
    await store?.close();
  });

  it('survives a script cache flush (NOSCRIPT falls back to EVAL)', async () => {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const limiter = new RedisSlidingWindow(new Redis(nodeRedisRequester(client)), policy(5));
      const id = `key:${randomBytes(4).toString('hex')}`;
      expect(await limiter.limit(id)).toMatchObject({ success: true, remaining: 4 });
      await client.sendCommand(['SCRIPT', 'FLUSH']);
      expect(await limiter.limit(id)).toMatchObject({ success: true, remaining: 3 });
    } finally {
      await client.quit();
    }
  });
});

describe('the start line with a Redis that is not there', () => {
  it("says the store is unreachable, and the first call's warning names its host and port", {
    timeout: 120_000,
  }, async () => {
    const { DATABASE_URL: _, ...env } = process.env;
    const server = spawnLogged(process.execPath, [built('server/main.ts')], {
      cwd: path.resolve(import.meta.dirname, '..'),
      env: {
        ...env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        REDIS_URL: 'redis://operator:secret@127.0.0.1:1',
      },
    });
    try {
      const listening = await listeningLine(server);
      expect(listening).toMatchObject({
        rateLimitStore: 'unreachable, limiting in process',
        rateLimitStoreAt: '127.0.0.1:1',
      });
      const answer = await fetch(`${listening.base}/partner/v1/brands`, {
        headers: { 'x-partner-api-key': DEMO_KEYS.active },
      });
      expect(answer.status).toBe(200);
      // The log reaches stdout in batches: wait for the warning's.
      const warning = await eventually(
        () => server.lines.find((line) => String(line.msg).includes('store unavailable')),
        (line) => line !== undefined,
      );
      expect(warning).toMatchObject({ store: '127.0.0.1:1' });
      expect(JSON.stringify(server.lines)).not.toContain('secret');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
