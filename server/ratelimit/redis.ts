import { Redis } from '@upstash/redis';
import { createClient } from 'redis';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { ADMIT_SCRIPT, REFUND_SCRIPT } from './redis-scripts';
import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from './sliding-window';
import { decide } from './sliding-window';

// The shared store of D-14: the project's own scripts (redis-scripts.ts) on an @upstash/redis client, so
// every instance counts against one limit. Over HTTP for Upstash; over TCP for a plain Redis through
// node-redis and a requester. @upstash/ratelimit is not used: its sliding-window script cannot admit a
// batch atomically (it refuses a full window without counting, but counts a batch that overshoots), and it
// takes each instance's clock, where D-14 wants the store's.

type UpstashRequest = { path?: string[]; body?: unknown };
type UpstashResponse = { result?: unknown; error?: string };
type NodeRedis = ReturnType<typeof createClient>;
/** What the limiter needs of @upstash/redis's Script: EVALSHA, falling back to EVAL on NOSCRIPT. */
type Script<TResult> = { exec(keys: string[], args: string[]): Promise<TResult> };

/** @upstash/redis's requester over node-redis, for single commands (all the limiter sends). */
export function nodeRedisRequester(client: NodeRedis) {
  return {
    async request<TResult>({ path, body }: UpstashRequest): Promise<UpstashResponse & { result?: TResult }> {
      if (path?.length) throw new Error(`unsupported @upstash/redis request: ${path.join('/')}`);
      try {
        return { result: (await client.sendCommand((body as unknown[]).map(String))) as TResult };
      } catch (error) {
        // A Redis error reply (NOSCRIPT, say) is an answer @upstash/redis handles (its script falls back to
        // EVAL); a dead connection is thrown, for the fallback limiter to catch.
        if (error instanceof Error && /^(SimpleError|ErrorReply)$/.test(error.constructor.name))
          return { error: error.message };
        throw error;
      }
    },
  };
}

/**
 * A sliding window in Redis, by the rule of sliding-window.ts, judged and counted by one script per decision on
 * the store's clock. The answer is turned into this instance's clock (`clock`, the one the headers are
 * computed with) by the offsets the script returns, so the headers hold whatever the clocks' skew.
 */
export class RedisSlidingWindow implements RateLimiter {
  private readonly admitScript: Script<number[]>;
  private readonly refundScript: Script<number>;

  constructor(
    redis: Redis,
    readonly policy: RateLimitPolicy,
    private readonly prefix = 'partner-api:ratelimit',
    private readonly clock: () => number = Date.now,
  ) {
    this.admitScript = redis.createScript<number[]>(ADMIT_SCRIPT);
    this.refundScript = redis.createScript<number>(REFUND_SCRIPT);
  }

  /** The hash holding the identifier's counts per window (redis-scripts.ts). */
  key(identifier: string): string {
    return `${this.prefix}:sliding:${identifier}`;
  }

  async limit(identifier: string, calls = 1): Promise<RateLimitDecision> {
    const { limit, windowMs } = this.policy;
    const reply = await this.admitScript.exec([this.key(identifier)], [limit, windowMs, calls].map(String));
    const [admitted, current, previous, elapsed, window] = reply.map(Number);
    if ([admitted, current, previous, elapsed, window].some((value) => !Number.isFinite(value)))
      throw new Error('unexpected answer from the rate-limit script');
    const now = this.clock();
    const before = { windowStart: now - Number(elapsed), current: Number(current), previous: Number(previous) };
    return { ...decide(this.policy, before, now, calls, admitted === 1), window: Number(window) };
  }

  async refund(identifier: string, calls = 1, counted?: RateLimitDecision): Promise<void> {
    const window = counted?.window === undefined ? '' : String(counted.window);
    await this.refundScript.exec([this.key(identifier)], [String(this.policy.windowMs), String(calls), window]);
  }
}

/** The configured shared store, or undefined when none is configured (the in-process limiter is used). */
export async function connectSharedStore(
  config: Config,
  policy: RateLimitPolicy,
  log: Logger,
  /** Key prefix in Redis; one per deployment (tests use their own). */
  prefix = 'partner-api:ratelimit',
  /** The clock the headers are computed with (the services' clock). */
  clock: () => number = Date.now,
): Promise<{ limiter: RateLimiter; close(): Promise<void> } | undefined> {
  if (config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN) {
    const redis = new Redis({
      url: config.UPSTASH_REDIS_REST_URL,
      token: config.UPSTASH_REDIS_REST_TOKEN,
      retry: { retries: 1, backoff: () => 50 },
    });
    return { limiter: new RedisSlidingWindow(redis, policy, prefix, clock), close: async () => {} };
  }
  if (!config.REDIS_URL) return undefined;
  const client = createClient({
    url: config.REDIS_URL,
    // Fail at once while disconnected (the fallback answers) instead of queueing calls.
    disableOfflineQueue: true,
    socket: { connectTimeout: 1_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5_000) },
  });
  client.on('error', (error: unknown) => log.debug({ error }, 'redis connection error'));
  // Start even if Redis is down: connect() keeps retrying in the background, and calls fall back.
  const connecting = client.connect().catch((error: unknown) => log.warn({ error }, 'redis connect failed'));
  await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  return {
    limiter: new RedisSlidingWindow(new Redis(nodeRedisRequester(client)), policy, prefix, clock),
    // The limiter has nothing to flush, and quit() waits for Redis, which may be stalled: drop the socket.
    close: async () => client.destroy(),
  };
}
