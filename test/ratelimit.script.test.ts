import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from '@upstash/redis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../server/config';
import { createLogger } from '../server/logger';
import { connectSharedStore, nodeRedisRequester, RedisSlidingWindow } from '../server/trpc/ratelimit/redis';
import { type OwnRedis, REDIS_SERVER_INSTALLED, startOwnRedis } from './support/redis-server';

// D-14: the shared store's script, rule by rule, on the real Redis (skipped without TEST_REDIS_URL). Every
// limiter here uses its own key prefix and deletes its keys: other runs share this Redis.
const REDIS_URL = process.env.TEST_REDIS_URL || undefined;
const WINDOW = 60_000;

type Client = ReturnType<typeof createClient>;

/** The store's clock, in ms. */
async function storeNowOn(client: Client): Promise<number> {
  const [seconds, micros] = (await client.sendCommand(['TIME'])) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Waits, if need be, until the store's window has `margin` ms left, so a test's calls share one window. */
async function awayFromWindowEndOn(client: Client, margin = 5_000) {
  const left = WINDOW - ((await storeNowOn(client)) % WINDOW);
  if (left < margin) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe.skipIf(!REDIS_URL)('the shared sliding window script (D-14)', () => {
  let client: ReturnType<typeof createClient>;
  const prefix = `partner-api-test:script:${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    client = createClient({ url: REDIS_URL });
    await client.connect();
  });
  afterAll(async () => {
    for (const key of await client.keys(`${prefix}:*`)) await client.del(key);
    await client.quit();
  });

  const limiter = (limit: number, clock?: () => number) =>
    new RedisSlidingWindow(
      new Redis(nodeRedisRequester(client)),
      { name: 'default', limit, windowMs: WINDOW },
      prefix,
      clock,
    );
  const fresh = () => `key:${randomBytes(6).toString('hex')}`;

  const storeNow = () => storeNowOn(client);
  const awayFromWindowEnd = (margin?: number) => awayFromWindowEndOn(client, margin);

  /** The identifier's counts per window, as the store holds them. */
  async function counts(limiterOf: RedisSlidingWindow, identifier: string): Promise<Record<string, number>> {
    const hash = await client.hGetAll(limiterOf.key(identifier));
    return Object.fromEntries(Object.entries(hash).map(([field, value]) => [field, Number(value)]));
  }

  it('admits a batch that fits exactly, then refuses the next call and says when one passes again', async () => {
    await awayFromWindowEnd();
    const store = limiter(10);
    const id = fresh();
    expect(await store.limit(id, 4)).toMatchObject({ success: true, remaining: 6 });
    const timed = async (calls?: number) => {
      const sent = Date.now();
      const decision = await store.limit(id, calls);
      return { decision, roundTripMs: Date.now() - sent };
    };
    const last = await timed(6);
    expect(last.decision).toMatchObject({ success: true, remaining: 0 });
    expect(last.decision.retryAt).toBeGreaterThan(Date.now());
    const refused = await timed();
    expect(refused.decision).toMatchObject({ success: false, remaining: 0 });
    // One moment, read twice: each reading is late by at most its call's round trip (and a millisecond of
    // each clock's rounding), however busy the machine.
    expect(Math.abs((refused.decision.retryAt ?? 0) - (last.decision.retryAt ?? 0))).toBeLessThanOrEqual(
      Math.max(last.roundTripMs, refused.roundTripMs) + 2,
    );
    expect(Object.values(await counts(store, id))).toEqual([10]);
  });

  it('refuses a batch one call too large whole, and counts none of it', async () => {
    await awayFromWindowEnd();
    const store = limiter(10);
    const id = fresh();
    for (let i = 0; i < 3; i++) await store.limit(id);
    const refused = await store.limit(id, 8);
    expect(refused).toMatchObject({ success: false, remaining: 7 });
    expect(refused.retryAt).toBeUndefined(); // calls remain: the headers give the window's end
    expect(Object.values(await counts(store, id))).toEqual([3]);
    expect(await store.limit(id, 7)).toMatchObject({ success: true, remaining: 0 });
    expect(Object.values(await counts(store, id))).toEqual([10]);
  });

  it('counts nothing for refused calls, and no refund takes a count below zero', async () => {
    await awayFromWindowEnd();
    const store = limiter(5);
    const id = fresh();
    for (let i = 0; i < 5; i++) await store.limit(id);
    for (let i = 0; i < 20; i++) expect((await store.limit(id, 1 + (i % 3))).success).toBe(false);
    expect(Object.values(await counts(store, id))).toEqual([5]);
    await store.refund(id, 2);
    expect(Object.values(await counts(store, id))).toEqual([3]);
    await store.refund(id, 50);
    expect(Object.values(await counts(store, id))).toEqual([0]);
    expect((await store.limit(id, 5)).success).toBe(true);
    const never = fresh();
    await store.refund(never, 3);
    expect(await client.exists(store.key(never))).toBe(0);
  });

  it('gives a late refund back to the window the calls were counted in', async () => {
    await awayFromWindowEnd();
    const store = limiter(5);
    const id = fresh();
    const counted = await store.limit(id, 2);
    const window = String(counted.window);
    // As if the window had rolled since: the refund goes to the counted window, not the current one.
    await client.hSet(store.key(id), String(Number(window) + 1), '4');
    await store.refund(id, 2, counted);
    expect(await counts(store, id)).toEqual({ [window]: 0, [String(Number(window) + 1)]: 4 });
  });

  it('weighs the previous window by the part of it still inside the sliding window', async () => {
    await awayFromWindowEnd(10_000);
    const store = limiter(100);
    const id = fresh();
    const before = await storeNow();
    const index = Math.floor(before / WINDOW);
    // The previous window was full at ten times the limit: floor(1000 × (1 − f)) ≥ 100 until f > 0.9.
    await client.hSet(store.key(id), String(index - 1), '1000');
    const refused = await store.limit(id);
    const after = await storeNow();
    expect(refused).toMatchObject({ success: false, remaining: 0 });
    // The moment floor(1000 × (1 − f)) drops below 100: 0.9 of the window, on the store's clock.
    expect(Math.abs((refused.retryAt ?? 0) - (index * WINDOW + 54_001))).toBeLessThan(1_000);

    // With the previous window at the limit, the weighted part is what remains uncounted.
    const other = fresh();
    await client.hSet(store.key(other), String(index - 1), '100');
    const t0 = await storeNow();
    const admitted = await store.limit(other);
    const t1 = await storeNow();
    const weighted = (t: number) => Math.floor(100 * (1 - (t - index * WINDOW) / WINDOW));
    expect(admitted.success).toBe(true);
    expect(admitted.remaining).toBeGreaterThanOrEqual(100 - weighted(t0) - 1);
    expect(admitted.remaining).toBeLessThanOrEqual(100 - weighted(t1) - 1);
    expect(after).toBeLessThan((index + 1) * WINDOW);
  });

  it("takes the window from the store's clock (TIME), not the instance's", async () => {
    await awayFromWindowEnd();
    const instanceNow = Date.UTC(2001, 0, 1); // an instance whose clock is decades off
    const skewed = limiter(10, () => instanceNow);
    const other = limiter(10, () => Date.now() + 3_600_000); // another, an hour ahead
    const id = fresh();
    const t0 = await storeNow();
    const decision = await skewed.limit(id, 3);
    const t1 = await storeNow();
    const index = Math.floor(t0 / WINDOW);
    expect(decision.window).toBe(index);
    expect(Object.keys(await counts(skewed, id))).toEqual([String(index)]);
    // Both instances count in the store's window, and each states its reset on its own clock.
    expect(await other.limit(id, 3)).toMatchObject({ success: true, remaining: 4 });
    expect(decision.reset - instanceNow).toBeGreaterThanOrEqual((index + 1) * WINDOW - t1);
    expect(decision.reset - instanceNow).toBeLessThanOrEqual((index + 1) * WINDOW - t0);
  });
});

// SCRIPT FLUSH empties the script cache of every client of a Redis: only on one the test started itself.
describe.skipIf(!REDIS_SERVER_INSTALLED)('the script over Upstash, on a Redis of its own', () => {
  let redis: OwnRedis;
  let client: Client;
  const prefix = `partner-api-test:script:${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    redis = await startOwnRedis();
    client = createClient({ url: redis.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.quit();
    await redis?.stop();
  });

  it('runs the same script over the Upstash REST transport (EVALSHA, then EVAL after NOSCRIPT)', async () => {
    // Upstash's REST protocol in front of the real Redis: one command as a JSON array per POST, answers
    // {result} (strings base64 when asked, as Upstash does) or a 400 with {error}.
    const sent: string[] = [];
    const rest = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const base64 = request.headers['upstash-encoding'] === 'base64';
      const encode = (value: unknown): unknown =>
        typeof value === 'string' && base64
          ? Buffer.from(value).toString('base64')
          : Array.isArray(value)
            ? value.map(encode)
            : value;
      const run = async (command: unknown[]) => {
        sent.push(String(command[0]).toUpperCase());
        try {
          return { result: encode(await client.sendCommand(command.map(String))) };
        } catch (error) {
          return { error: String(error) };
        }
      };
      const parsed = JSON.parse(body) as unknown[];
      // POST / carries one command; POST /pipeline an array of them (the client pipelines automatically).
      const answer =
        request.url === '/pipeline' ? await Promise.all((parsed as unknown[][]).map(run)) : await run(parsed);
      const failed = !Array.isArray(answer) && 'error' in answer;
      response.writeHead(failed ? 400 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => rest.once('listening', resolve));
    try {
      await awayFromWindowEndOn(client);
      const config = parseConfig({
        UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${(rest.address() as AddressInfo).port}`,
        UPSTASH_REDIS_REST_TOKEN: 'test-token',
      });
      const store = await connectSharedStore(
        config,
        { name: 'default', limit: 3, windowMs: WINDOW },
        createLogger('silent'),
        prefix,
      );
      if (!store) throw new Error('no store');
      const id = `key:${randomBytes(6).toString('hex')}`;
      await client.sendCommand(['SCRIPT', 'FLUSH']);
      expect(await store.limiter.limit(id, 2)).toMatchObject({ success: true, remaining: 1 });
      expect(await store.limiter.limit(id, 2)).toMatchObject({ success: false, remaining: 1 });
      expect(await store.limiter.limit(id)).toMatchObject({ success: true, remaining: 0 });
      expect(sent.filter((command) => command.startsWith('EVAL')).slice(0, 3)).toEqual(['EVALSHA', 'EVAL', 'EVALSHA']);
      await store.close();
    } finally {
      rest.close();
    }
  });
});
