import type { Db } from '../db/client';
import type { Config } from './config';
import type { Services } from './context';
import type { Logger } from './logger';
import { policies } from './ratelimit/limiter';
import { MemorySlidingWindow } from './ratelimit/memory';

/** The process-wide services from the configuration (D-2). */
export function createServices(config: Config, db: Db, log: Logger, now: () => Date = () => new Date()): Services {
  const { perKey, perAddressRefused } = policies(config.RATE_LIMIT_PER_MINUTE);
  if (config.REDIS_URL || config.UPSTASH_REDIS_REST_URL) {
    // The shared store of D-14 is not built yet: say so instead of pretending the limit is shared.
    log.warn('shared rate-limit store not implemented yet; limiting in process', { policy: perKey.name });
  }
  const clock = () => now().getTime();
  return {
    db,
    log,
    now,
    rateLimit: {
      policy: perKey,
      limiter: new MemorySlidingWindow(perKey, clock),
      refused: new MemorySlidingWindow(perAddressRefused, clock),
    },
  };
}
