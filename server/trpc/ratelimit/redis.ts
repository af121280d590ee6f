import { Redis, type Requester, type UpstashRequest, type UpstashResponse } from '@upstash/redis';
import { createClient } from 'redis';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { decide, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from './sliding-window';

// D-14's shared store: our scripts on @upstash/redis, as @upstash/ratelimit cannot judge a batch atomically.

type NodeRedis = ReturnType<typeof createClient>;
/** What the limiter needs of @upstash/redis's Script: EVALSHA, falling back to EVAL on NOSCRIPT. */
type Script<TResult> = { exec(keys: string[], args: string[]): Promise<TResult> };

/** @upstash/redis's requester over node-redis, for single commands (all the limiter sends). */
export function nodeRedisRequester(client: NodeRedis): Requester {
  return {
    async request<TResult>({ path, body }: UpstashRequest): Promise<UpstashResponse<TResult>> {
      if (path?.length) throw new Error(`unsupported @upstash/redis request: ${path.join('/')}`);
      try {
        return { result: (await client.sendCommand((body as unknown[]).map(String))) as TResult };
      } catch (error) {
        // An error reply (NOSCRIPT) is @upstash/redis's to handle; a dead connection is the fallback's.
        if (error instanceof Error && /^(SimpleError|ErrorReply)$/.test(error.constructor.name))
          return { error: error.message };
        throw error;
      }
    },
  };
}

/** A sliding window in Redis, judged by one script on the store's clock; its offsets survive the clocks' skew. */
export class RedisSlidingWindow implements RateLimiter {
  private readonly limitScript: Script<number[]>;
  private readonly refundScript: Script<number>;

  constructor(
    private readonly redis: Redis,
    readonly policy: RateLimitPolicy,
    private readonly prefix = 'partner-api:ratelimit',
    private readonly clock: () => number = Date.now,
    readonly at?: string,
  ) {
    this.limitScript = redis.createScript<number[]>(LIMIT_SCRIPT);
    this.refundScript = redis.createScript<number>(REFUND_SCRIPT);
  }

  /** The hash holding the identifier's counts per window (the scripts below). */
  key(identifier: string): string {
    return `${this.prefix}:sliding:${identifier}`;
  }

  async limit(identifier: string, calls = 1): Promise<RateLimitDecision> {
    const { limit, windowMs } = this.policy;
    const reply = await this.limitScript.exec([this.key(identifier)], [limit, windowMs, calls].map(String));
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

  /** Another policy on the same client and prefix; its identifiers must differ from this one's. */
  withPolicy(policy: RateLimitPolicy): RedisSlidingWindow {
    return new RedisSlidingWindow(this.redis, policy, this.prefix, this.clock, this.at);
  }
}

/** A shared store as the server holds it, and what it was at start: the start line says which. */
export type SharedStore = {
  limiter: RateLimiter;
  close(): Promise<void>;
  /** `shared` once the store answered a PING at start; otherwise calls are limited in process until it does. */
  status: 'shared' | 'unreachable, limiting in process';
  /** host:port of the store, without the URL's credentials. */
  at: string;
};

/** How long the start waits for the store to connect and answer before going on without it. */
const START_WAIT_MS = 1_000;

/** Whether `work` succeeds within `ms`; a failure or a late answer is false. */
function answersWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const late = new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref());
  return Promise.race([
    work.then(
      () => true,
      () => false,
    ),
    late,
  ]);
}

function hostAndPort(url: string, defaultPort: string): string {
  const { hostname, port } = new URL(url);
  return `${hostname}:${port || defaultPort}`;
}

/** The configured shared store, or undefined when none is configured (the in-process limiter is used). */
export async function connectSharedStore(
  config: Config,
  policy: RateLimitPolicy,
  log: Logger,
  /** One per deployment (tests use their own). */
  prefix = 'partner-api:ratelimit',
  clock: () => number = Date.now,
): Promise<SharedStore | undefined> {
  const { UPSTASH_REDIS_REST_URL: url, UPSTASH_REDIS_REST_TOKEN: token } = config;
  if (url && token) {
    const at = hostAndPort(url, url.startsWith('https:') ? '443' : '80');
    const redis = new Redis({ url, token, retry: { retries: 1, backoff: () => 50 } });
    const answered = await answersWithin(redis.ping(), START_WAIT_MS);
    return {
      limiter: new RedisSlidingWindow(redis, policy, prefix, clock, at),
      close: async () => {},
      status: answered ? 'shared' : 'unreachable, limiting in process',
      at,
    };
  }
  if (!config.REDIS_URL) return undefined;
  const at = hostAndPort(config.REDIS_URL, '6379');
  const client = createClient({
    url: config.REDIS_URL,
    // Fail at once while disconnected (the fallback answers) instead of queueing calls.
    disableOfflineQueue: true,
    socket: { connectTimeout: 1_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5_000) },
  });
  client.on('error', (error: unknown) => log.debug({ store: at, error }, 'redis connection error'));
  // Start even if Redis is down: connect() keeps retrying in the background, and calls fall back.
  const connecting = client.connect().catch((error: unknown) => log.warn({ store: at, error }, 'redis connect failed'));
  await answersWithin(connecting, START_WAIT_MS);
  // Offline, PING fails at once (no offline queue); connected, it proves the store answers.
  const answered = client.isReady && (await answersWithin(client.ping(), START_WAIT_MS));
  return {
    limiter: new RedisSlidingWindow(new Redis(nodeRedisRequester(client)), policy, prefix, clock, at),
    // The limiter has nothing to flush, and quit() waits for Redis, which may be stalled: drop the socket.
    close: async () => client.destroy(),
    status: answered ? 'shared' : 'unreachable, limiting in process',
    at,
  };
}

// Each script is atomic on the store's clock; KEYS[1] is one hash per identifier, as Redis Cluster requires.

/** Counts ARGV[3] calls if they fit; returns {admitted 0|1, current before, previous, elapsed ms, window index}. */
const LIMIT_SCRIPT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local calls = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local index = math.floor(now / window)
local elapsed = now - index * window
local field = tostring(index)
local current = tonumber(redis.call('HGET', KEYS[1], field) or '0')
local previous = tonumber(redis.call('HGET', KEYS[1], tostring(index - 1)) or '0')
local used = math.floor(previous * (1 - elapsed / window)) + current
if calls < 1 or used + calls > limit then
  return {0, current, previous, elapsed, index}
end
redis.call('HINCRBY', KEYS[1], field, calls)
for _, old in ipairs(redis.call('HKEYS', KEYS[1])) do
  if old ~= field and old ~= tostring(index - 1) then redis.call('HDEL', KEYS[1], old) end
end
redis.call('PEXPIRE', KEYS[1], window * 2 + 1000)
return {1, current, previous, elapsed, index}
`;

/** Gives back up to ARGV[2] calls of window ARGV[3] (empty: the current one), never creating a count. */
const REFUND_SCRIPT = `
local window = tonumber(ARGV[1])
local field = ARGV[3]
if field == '' then
  local time = redis.call('TIME')
  field = tostring(math.floor((tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)) / window))
end
local have = tonumber(redis.call('HGET', KEYS[1], field) or '0')
local give = math.min(have, tonumber(ARGV[2]))
if give <= 0 then return 0 end
redis.call('HINCRBY', KEYS[1], field, -give)
return give
`;
