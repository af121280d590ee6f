import { controlOf, type Db, slotsOf } from '../../db/client';
import type { PoolSlots } from '../../db/pool-slots';
import { loadFeedCursorKey } from '../../db/queries/review-changes';
import type { Replicas } from '../../db/replicas';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { KeyAndBrandCache, type KeyAndBrandCacheOptions } from './cache/key-and-brand-cache';
import { FallbackLimiter } from './ratelimit/fallback';
import { MemorySlidingWindow, policies, type RateLimiter, type RateLimitPolicy } from './ratelimit/sliding-window';

/** What lives as long as the process: built once in main.ts (or a test) and shared by every request. */
export type Services = {
  db: Db;
  /** D-21: the same database on its own connections, for the cache and /readyz. */
  control: Db;
  /** D-21: the slots of `db`'s request pool, one held by each call while it reads (postgres.js only). */
  slots?: PoolSlots | undefined;
  /** D-23: the read replicas a call reads from when one is usable; unset, every read is on `db`. */
  replicas?: Replicas | undefined;
  log: Logger;
  /** The clock; tests pin it. "Today" is derived from it in KST (D-5). */
  now: () => Date;
  rateLimit: {
    policy: RateLimitPolicy;
    limiter: RateLimiter;
    /** Refused key checks per client address (D-14); in process on purpose: it guards this instance's database. */
    refused: MemorySlidingWindow;
    /** 304s per key that give their call back (D-27), in the same store as `limiter`. */
    notModified: RateLimiter;
  };
  /** The keys and brands calls use, by key hash, brand code and partner (D-14, D-21). */
  cache: KeyAndBrandCache;
  /** The key that seals the feed's cursors (D-26), read once from the database. */
  feedCursorKey: () => Promise<Buffer>;
};

/** The process-wide services (D-2); a shared limit store falls back to a local counter when slow or down (D-14). */
export function createServices(
  config: Config,
  db: Db,
  log: Logger,
  now: () => Date = () => new Date(),
  sharedStore?: RateLimiter,
  /** The cache's timing; tests pin its clock. */
  cache: KeyAndBrandCacheOptions = {},
  /** D-23: request reads go to these; the cache and /readyz stay on the primary's control client. */
  replicas?: Replicas,
): Services {
  const control = controlOf(db);
  const { perKey, perAddressRefused, perKeyNotModified } = policies(config.RATE_LIMIT_PER_MINUTE);
  const clock = () => now().getTime();
  const local = new MemorySlidingWindow(perKey, clock);
  const notModifiedLocal = new MemorySlidingWindow(perKeyNotModified, clock);
  const notModifiedShared = sharedStore?.withPolicy?.(perKeyNotModified);
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
      notModified: notModifiedShared ? new FallbackLimiter(notModifiedShared, notModifiedLocal, log) : notModifiedLocal,
    },
    cache: new KeyAndBrandCache(db, control, cache),
    feedCursorKey: readOnce(() => loadFeedCursorKey(control)),
  };
}

/** `load`'s answer, shared by every caller once it succeeds; a failed load is tried again by the next caller. */
function readOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let held: Promise<T> | undefined;
  return () => {
    held ??= load().catch((error: unknown) => {
      held = undefined;
      throw error;
    });
    return held;
  };
}
