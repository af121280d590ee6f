import { Ratelimit } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis';
import { createClient } from 'redis';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from './limiter';
import { freeAt } from './window';

// The shared store of D-14: @upstash/ratelimit on an @upstash/redis client, so every instance of the
// service counts against one limit. Over HTTP for Upstash; over TCP for a plain Redis through node-redis
// and a requester. @upstash/ratelimit is pinned to 2.0.8: from
// 2.1.0 its Lua scripts declare a shebang flag that Redis 7.0 rejects.

type UpstashRequest = { path?: string[]; body?: unknown };
type UpstashResponse = { result?: unknown; error?: string };
type NodeRedis = ReturnType<typeof createClient>;

/** @upstash/redis's requester over node-redis: one command, a pipeline or a MULTI. */
export function nodeRedisRequester(client: NodeRedis) {
  const args = (command: unknown) => (command as unknown[]).map(String);
  return {
    async request<TResult>({ path, body }: UpstashRequest): Promise<UpstashResponse & { result?: TResult }> {
      try {
        if (path?.[0] === 'pipeline' || path?.[0] === 'multi-exec') {
          const batch = client.multi();
          for (const command of body as unknown[]) batch.addCommand(args(command));
          const replies = path[0] === 'pipeline' ? await batch.execAsPipeline() : await batch.exec();
          return replies.map((result) => ({ result })) as unknown as UpstashResponse & { result?: TResult };
        }
        return { result: (await client.sendCommand(args(body))) as TResult };
      } catch (error) {
        // A Redis error reply (NOSCRIPT, say) is an answer the library handles (it falls back to EVAL);
        // a dead connection is thrown, for the fallback limiter to catch.
        if (error instanceof Error && /^(SimpleError|ErrorReply)$/.test(error.constructor.name))
          return { error: error.message };
        throw error;
      }
    },
  };
}

/** A sliding window in Redis, by the same rule as the in-process one (window.ts). */
export class RedisSlidingWindow implements RateLimiter {
  private readonly ratelimit: Ratelimit;

  constructor(
    private readonly redis: Redis,
    readonly policy: RateLimitPolicy,
    private readonly prefix = 'partner-api:ratelimit',
  ) {
    this.ratelimit = new Ratelimit({
      redis,
      limiter: Ratelimit.slidingWindow(policy.limit, `${policy.windowMs} ms`),
      prefix,
      // Its in-process cache would refuse until the window's end, though a sliding window frees calls
      // earlier: per-instance state that changes answers. Its fail-open timeout is replaced by ours.
      ephemeralCache: false,
      timeout: 0,
      analytics: false,
    });
  }

  /** The library's sliding-window script takes a negative increment as a refund. */
  async refund(identifier: string, calls = 1): Promise<void> {
    await this.ratelimit.limit(identifier, { rate: -calls });
  }

  async limit(identifier: string, calls = 1): Promise<RateLimitDecision> {
    if (calls > 1) {
      // The library's script adds a whole batch even when it overshoots (and then refuses it), and a
      // refused batch must count nothing (D-20): refuse one that cannot fit before counting it, and give
      // back one that lost a race for the last calls.
      const { remaining, reset } = await this.ratelimit.getRemaining(identifier);
      if (remaining < calls) return { success: false, limit: this.policy.limit, remaining, reset };
      const batch = await this.ratelimit.limit(identifier, { rate: calls });
      if (batch.success) return { success: true, limit: batch.limit, remaining: batch.remaining, reset: batch.reset };
      await this.refund(identifier, calls);
      return { success: false, limit: batch.limit, remaining: batch.remaining, reset: batch.reset };
    }
    const { success, limit, remaining, reset } = await this.ratelimit.limit(identifier);
    if (success && remaining > 0) return { success, limit, remaining, reset };
    // The budget is spent: read both windows' counts to say exactly when a call is accepted again (the
    // library only knows the window's end, which is not that moment).
    const window = Math.floor(reset / this.policy.windowMs) - 1;
    const key = (index: number) => `${this.prefix}:${identifier}:${index}`;
    const [current, previous] = await this.redis.mget<[number | null, number | null]>(key(window), key(window - 1));
    const now = Date.now();
    const counts = {
      windowStart: window * this.policy.windowMs,
      current: Number(current ?? 0),
      previous: Number(previous ?? 0),
    };
    return { success, limit, remaining, reset, retryAt: freeAt(this.policy, counts, now) };
  }
}

/** The configured shared store, or undefined when none is configured (the in-process limiter is used). */
export async function connectSharedStore(
  config: Config,
  policy: RateLimitPolicy,
  log: Logger,
  /** Key prefix in Redis; one per deployment (tests use their own). */
  prefix = 'partner-api:ratelimit',
): Promise<{ limiter: RateLimiter; close(): Promise<void> } | undefined> {
  if (config.UPSTASH_REDIS_REST_URL && config.UPSTASH_REDIS_REST_TOKEN) {
    const redis = new Redis({
      url: config.UPSTASH_REDIS_REST_URL,
      token: config.UPSTASH_REDIS_REST_TOKEN,
      retry: { retries: 1, backoff: () => 50 },
    });
    return { limiter: new RedisSlidingWindow(redis, policy, prefix), close: async () => {} };
  }
  if (!config.REDIS_URL) return undefined;
  const client = createClient({
    url: config.REDIS_URL,
    // Fail at once while disconnected (the fallback answers) instead of queueing calls.
    disableOfflineQueue: true,
    socket: { connectTimeout: 1_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5_000) },
  });
  client.on('error', (error: unknown) => log.debug('redis connection error', { error }));
  // Start even if Redis is down: connect() keeps retrying in the background, and calls fall back.
  const connecting = client.connect().catch((error: unknown) => log.warn('redis connect failed', { error }));
  await Promise.race([connecting, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  return {
    limiter: new RedisSlidingWindow(new Redis(nodeRedisRequester(client)), policy, prefix),
    // The limiter has nothing to flush, and quit() waits for Redis, which may be stalled: drop the socket.
    close: async () => client.destroy(),
  };
}
