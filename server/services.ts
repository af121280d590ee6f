import type { Db } from '../db/client';
import { loadApiKeyStates } from '../db/queries/apiKeys';
import type { Config } from './config';
import type { Services } from './context';
import { KeyDirectory } from './key-directory';
import type { Logger } from './logger';
import { FallbackLimiter } from './ratelimit/fallback';
import { policies, type RateLimiter } from './ratelimit/limiter';
import { MemorySlidingWindow } from './ratelimit/memory';

/**
 * The process-wide services from the configuration (D-2). With a shared store (server/ratelimit/redis.ts)
 * the per-key limit is shared by every instance, falling back to this instance's own counter when the
 * store is slow or down (D-14); without one it is the in-process counter.
 */
export function createServices(
  config: Config,
  db: Db,
  log: Logger,
  now: () => Date = () => new Date(),
  sharedStore?: RateLimiter,
  /** The key directory's timing (server/key-directory.ts); tests shorten or pin it. */
  keyDirectory: ConstructorParameters<typeof KeyDirectory>[1] = {},
): Services {
  const { perKey, perAddressRefused } = policies(config.RATE_LIMIT_PER_MINUTE);
  const clock = () => now().getTime();
  const local = new MemorySlidingWindow(perKey, clock);
  return {
    db,
    log,
    now,
    rateLimit: {
      policy: perKey,
      limiter: sharedStore ? new FallbackLimiter(sharedStore, local, log) : local,
      refused: new MemorySlidingWindow(perAddressRefused, clock),
      keys: new KeyDirectory(() => loadApiKeyStates(db), keyDirectory),
    },
  };
}
