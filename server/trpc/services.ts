import { controlOf, type Db, slotsOf } from '../../db/client';
import type { PoolSlots } from '../../db/pool-slots';
import { type ApiKeyState, loadApiKeyStates } from '../../db/queries/apiKeys';
import { type BrandEntry, loadBrandScopes } from '../../db/queries/brands';
import { loadFeedCursorKey } from '../../db/queries/review-changes';
import type { Replicas } from '../../db/replicas';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { FallbackLimiter } from './ratelimit/fallback';
import { MemorySlidingWindow, policies, type RateLimiter, type RateLimitPolicy } from './ratelimit/sliding-window';

/** What lives as long as the process: built once in main.ts (or a test) and shared by every request. */
export type Services = {
  db: Db;
  /** D-21: the same database on its own connections, for the caches and /readyz. */
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
    /** Every key's state by its hash. */
    keys: RefreshingCache<ApiKeyState>;
  };
  /** Every brand by its code. */
  brands: RefreshingCache<BrandEntry>;
  /** The key that seals the feed's cursors (D-26), read once from the database. */
  feedCursorKey: () => Promise<Buffer>;
};

type CacheOptions = {
  maxAgeMs?: number;
  minIntervalMs?: number;
  /** A load not done by then is given up, so one stuck statement cannot hold every call (D-20). */
  loadTimeoutMs?: number;
  /** Monotonic milliseconds (performance.now), independent of the business clock tests pin. */
  clock?: () => number;
};

/** The process-wide services (D-2); a shared limit store falls back to a local counter when slow or down (D-14). */
export function createServices(
  config: Config,
  db: Db,
  log: Logger,
  now: () => Date = () => new Date(),
  sharedStore?: RateLimiter,
  /** The caches' timing; tests shorten or pin it. */
  caches: CacheOptions = {},
  /** D-23: request reads go to these; the caches and /readyz stay on the primary's control client. */
  replicas?: Replicas,
): Services {
  const control = controlOf(db);
  const { perKey, perAddressRefused, perKeyNotModified } = policies(config.RATE_LIMIT_PER_MINUTE);
  const clock = () => now().getTime();
  const local = new MemorySlidingWindow(perKey, clock);
  const notModifiedLocal = new MemorySlidingWindow(perKeyNotModified, clock);
  const notModifiedShared = sharedStore?.withPolicy?.(perKeyNotModified);
  const keyStates = async () => new Map((await loadApiKeyStates(control)).map((key) => [key.keyHash, key]));
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
      keys: new RefreshingCache(keyStates, caches),
    },
    brands: new RefreshingCache(() => loadBrandScopes(control), caches),
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

/** A small table in memory, reloaded whole (D-14, D-20); misses share loads at most one per `minIntervalMs`. */
export class RefreshingCache<Entry> {
  private entries = new Map<string, Entry>();
  /** When the load whose result is held started; -∞ before the first. */
  private loadedFrom = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  private lastError: unknown;
  private lastFailureFrom = Number.NEGATIVE_INFINITY;
  /** Loads made, for tests. */
  loads = 0;

  constructor(
    private readonly load: () => Promise<Map<string, Entry>>,
    private readonly options: CacheOptions = {},
  ) {}

  /** Now, on the cache's clock: what a call notes as its arrival. */
  now(): number {
    return this.options.clock ? this.options.clock() : performance.now();
  }

  /** How old the held entries are (since their load started), in ms; Infinity before the first load. */
  ageMs(): number {
    return this.now() - this.loadedFrom;
  }

  /** The entry as held at most `maxAgeMs` ago; undefined when there is none of that name. */
  async get(name: string): Promise<Entry | undefined> {
    return (await this.all()).get(name);
  }

  /** Every entry at most `maxAgeMs` old, in the order its load gave them. */
  async all(): Promise<ReadonlyMap<string, Entry>> {
    const now = this.now();
    const maxAgeMs = this.options.maxAgeMs ?? 1_000;
    if (now - this.loadedFrom >= maxAgeMs / 2 && !this.loading && now - this.lastStart >= this.minIntervalMs)
      this.start();
    await this.loadedSince(now - maxAgeMs);
    return this.entries;
  }

  /** The entry from a load that started after `arrivedAt`: the answer for a name not held before. */
  async reloaded(name: string, arrivedAt: number): Promise<Entry | undefined> {
    await this.loadedSince(arrivedAt);
    return this.entries.get(name);
  }

  private get minIntervalMs() {
    return this.options.minIntervalMs ?? 100;
  }

  /** Resolves once the held entries come from a load that started at or after `instant`. */
  async loadedSince(instant: number): Promise<void> {
    while (this.loadedFrom < instant) {
      if (this.loading) {
        await this.loading.catch(() => undefined);
        // A failed load that started after `instant` is this caller's answer: the database is down.
        if (this.loadedFrom < instant && this.lastFailureFrom >= instant) throw this.lastError;
        continue;
      }
      const wait = this.lastStart + this.minIntervalMs - this.now();
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        continue;
      }
      this.start();
    }
  }

  private start() {
    const startedAt = this.now();
    this.lastStart = startedAt;
    this.loads += 1;
    // Shared by every waiting call, so bounded on its own, not by any one call's deadline.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      const ms = this.options.loadTimeoutMs ?? 2_000;
      timer = setTimeout(() => reject(new Error(`cache load slower than ${ms} ms`)), ms);
    });
    const loading = Promise.race([this.load(), timeout]).then(
      (entries) => {
        this.entries = entries;
        this.loadedFrom = startedAt;
      },
      (error: unknown) => {
        this.lastError = error;
        this.lastFailureFrom = startedAt;
        throw error;
      },
    );
    this.loading = loading;
    loading
      .finally(() => {
        clearTimeout(timer);
        if (this.loading === loading) this.loading = undefined;
      })
      .catch(() => undefined);
  }
}
