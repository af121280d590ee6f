import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../db/keys';
import { DEMO_KEYS } from '../db/seed/demo';
import { parseConfig } from '../server/config';
import { createLogger } from '../server/logger';
import { connectSharedStore, type RedisSlidingWindow } from '../server/trpc/ratelimit/redis';
import { policies } from '../server/trpc/ratelimit/sliding-window';
import { createServices } from '../server/trpc/services';
import { NOW, openTestDatabase } from './support/database';
import { startServer } from './support/services';

// D-14: no mix of single calls and tRPC batches, on any number of instances, passes more than the limit
// in a fixed minute, and no count goes below zero. Two instances of the service share the real Redis
// (skipped without TEST_REDIS_URL); one fresh key is attacked with 30 concurrent 10-call batches and 100
// single REST calls, three rounds in a row.
const REDIS_URL = process.env.TEST_REDIS_URL || undefined;
const LIMIT = 100;
const BATCHES = 30;
const BATCH_CALLS = 10;
const SINGLES = 100;

const batchPath = `/partner/v1/trpc/${Array(BATCH_CALLS).fill('brands.list').join(',')}?batch=1&input=${encodeURIComponent(
  JSON.stringify(Object.fromEntries(Array.from({ length: BATCH_CALLS }, (_, i) => [i, {}]))),
)}`;

/** One answer of the attack: how many calls it asked for, how many were served, and its headers. */
type Answer = { calls: number; served: number; remaining: number; retryAfter: string | null; status: number };

describe.skipIf(!REDIS_URL)('the shared limit under a mixed attack on two instances (D-14)', () => {
  const prefix = `partner-api-test:attack:${randomBytes(4).toString('hex')}`;
  const stores: NonNullable<Awaited<ReturnType<typeof connectSharedStore>>>[] = [];
  let admin: ReturnType<typeof createClient>;
  let database: Awaited<ReturnType<typeof openTestDatabase>>;

  beforeAll(async () => {
    database = await openTestDatabase();
    admin = createClient({ url: REDIS_URL });
    await admin.connect();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    for (const key of await admin.keys(`${prefix}:*`)) await admin.del(key);
    await admin.quit();
  });

  async function storeNow(): Promise<number> {
    const [seconds, micros] = (await admin.sendCommand(['TIME'])) as [string, string];
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  // The store answering throughout is this test's premise (during an outage each instance limits alone).
  const warnings: string[] = [];
  const log = createLogger('warn', (line) => warnings.push(line));

  it('passes at most the limit in the fixed minute, counts exactly what it passed, never below zero', async () => {
    const servers = [];
    for (let i = 0; i < 2; i++) {
      const config = parseConfig({ REDIS_URL: REDIS_URL ?? '' });
      const policy = policies(config.RATE_LIMIT_PER_MINUTE).perKey;
      const store = await connectSharedStore(config, policy, log, prefix, () => NOW.getTime());
      if (!store) throw new Error('no store');
      stores.push(store);
      const services = createServices(config, database.db, log, () => NOW, store.limiter);
      servers.push(await startServer(services));
    }
    const limiter = stores[0]?.limiter as RedisSlidingWindow;
    const key = limiter.key(`key:${hashApiKey(DEMO_KEYS.active)}`);
    const [one, two] = servers;
    if (!one || !two) throw new Error('servers missing');

    // Every round inside one fixed minute of the store's clock, so that minute's count is the whole story.
    const left = 60_000 - ((await storeNow()) % 60_000);
    if (left < 25_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
    const window = String(Math.floor((await storeNow()) / 60_000));

    // The count as the store holds it, watched throughout.
    const seen: number[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const value of await admin.hVals(key)) seen.push(Number(value));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();

    const call = async (server: typeof one, batch: boolean): Promise<Answer> => {
      const answer = await server.request(batch ? batchPath : '/partner/v1/brands', { key: DEMO_KEYS.active });
      const calls = batch ? BATCH_CALLS : 1;
      const items = batch ? (answer.body as unknown as { result?: unknown }[]) : [answer.body];
      const served = batch ? items.filter((item) => item.result !== undefined).length : answer.status === 200 ? 1 : 0;
      return {
        calls,
        served,
        remaining: Number(answer.headers.get('ratelimit-remaining')),
        retryAfter: answer.headers.get('retry-after'),
        status: answer.status,
      };
    };

    const answers: Answer[] = [];
    for (let round = 0; round < 3; round++) {
      // Interleaved (three singles, then a batch, …), so batches meet every count the singles leave.
      const kinds = Array.from({ length: BATCHES + SINGLES }, (_, i) => i % 4 === 3 && i < BATCHES * 4);
      const attack = kinds.map((batch, i) => call(i % 2 ? two : one, batch));
      answers.push(...(await Promise.all(attack)));
    }
    watching = false;
    await watcher;
    expect(await storeNow()).toBeLessThan((Number(window) + 1) * 60_000); // still the same fixed minute
    expect(warnings).toEqual([]);

    const admitted = answers.filter((answer) => answer.served > 0);
    const refused = answers.filter((answer) => answer.served === 0);
    const passed = admitted.reduce((sum, answer) => sum + answer.served, 0);
    // A batch is admitted or refused whole; a refusal is a 429 with Retry-After.
    for (const answer of admitted) expect(answer.served).toBe(answer.calls);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(answer.remaining).toBeGreaterThanOrEqual(0);
    }
    expect(passed).toBeLessThanOrEqual(LIMIT);
    // What remains is the limit less what was passed: at most one batch's worth can be left over.
    expect(passed).toBeGreaterThan(LIMIT - BATCH_CALLS);

    // The store counted exactly what passed, in this minute only, and never held a negative count.
    expect(await admin.hGetAll(key)).toEqual({ [window]: String(passed) });
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(0);

    // RateLimit-Remaining: each decision says the count right after it; in order, they step by the calls
    // admitted, from the first to the last, one decision at a time.
    const steps = admitted
      .map((answer) => ({ after: LIMIT - answer.remaining, calls: answer.calls }))
      .sort((a, b) => a.after - b.after);
    let count = 0;
    for (const step of steps) {
      expect(step.after).toBe(count + step.calls);
      count = step.after;
    }
    expect(count).toBe(passed);
  }, 90_000);
});
