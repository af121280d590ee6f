import { controlOf, type Db, slotsOf } from '../db/client';
import { loadApiKeyStates } from '../db/queries/apiKeys';
import { loadBrandScopes } from '../db/queries/brands';
import type { Replicas } from '../db/replicas';
import type { Config } from './config';
import type { Services } from './context';
import { Directory } from './directory';
import type { Logger } from './logger';
import { FallbackLimiter } from './ratelimit/fallback';
import { policies, type RateLimiter } from './ratelimit/limiter';
import { MemorySlidingWindow } from './ratelimit/memory';

type DirectoryOptions = ConstructorParameters<typeof Directory>[1];

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
  /** The directories' timing (server/directory.ts); tests shorten or pin it. */
  directories: DirectoryOptions = {},
  /** D-23: request reads go to these; the directories and /readyz stay on the primary's control client. */
  replicas?: Replicas,
): Services {
  // D-21: the directories and /readyz use the database's control client, never the request pool.
  const control = controlOf(db);
  const { perKey, perAddressRefused } = policies(config.RATE_LIMIT_PER_MINUTE);
  const clock = () => now().getTime();
  const local = new MemorySlidingWindow(perKey, clock);
  return {
    db,
    control,
    slots: slotsOf(db),
    replicas,
    log,
    now,
    rateLimit: {
      policy: perKey,
      limiter: sharedStore ? new FallbackLimiter(sharedStore, local, log) : local,
      refused: new MemorySlidingWindow(perAddressRefused, clock),
      keys: new Directory(
        async () => new Map((await loadApiKeyStates(control)).map((key) => [key.keyHash, key])),
        directories,
      ),
    },
    brands: new Directory(() => loadBrandScopes(control), directories),
  };
}
