import { withoutQuerySignal } from '../db/cancellation';
import type { ApiKeyState } from '../db/queries/apiKeys';

/**
 * Every API key's state (hash → partner, revoked, expires, partner active), held in memory and reloaded
 * whole from the database, so that the key check costs no round trip and no caller can make it cost one
 * per call (D-14, D-20; issue 7 finding 5, issue 8 per-request round trips).
 *
 * - Freshness, the one bound: a call never sees a directory older than `maxAgeMs` (1 s). A key revoked,
 *   or a partner deactivated, is refused on every instance within that. Expiry is exact: it is judged
 *   against the call's clock, not at load.
 * - A key the directory does not hold may have been issued since the last load: the call waits for a
 *   load that started after it arrived, then is judged. Loads are single-flight and at least
 *   `minIntervalMs` apart, so a flood of unknown keys, from one address or many, costs the database at
 *   most one small query per `minIntervalMs`, never one per call. A valid key is therefore never refused
 *   for lack of a lookup, whatever others send.
 * - `clock` is monotonic milliseconds (performance.now), independent of the business clock tests pin.
 * The table is small (a few keys per partner); reloading it whole keeps this exact and simple.
 */
export class KeyDirectory {
  private keys = new Map<string, ApiKeyState>();
  /** When the load whose result is held started; -∞ before the first. */
  private loadedFrom = Number.NEGATIVE_INFINITY;
  private loading: { startedAt: number; done: Promise<void> } | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  /** The last failed load: its error, and when it started. */
  private lastError: unknown;
  private lastFailureFrom = Number.NEGATIVE_INFINITY;
  /** Loads made, for tests and logs. */
  loads = 0;

  constructor(
    private readonly load: () => Promise<ApiKeyState[]>,
    private readonly options: {
      maxAgeMs?: number;
      minIntervalMs?: number;
      /** A load not done by then is given up, so one stuck statement cannot hold every call (D-20). */
      loadTimeoutMs?: number;
      clock?: () => number;
    } = {},
  ) {}

  private get clock() {
    return this.options.clock ?? (() => performance.now());
  }

  /** Now, on the directory's clock: what a call notes as its arrival. */
  now(): number {
    return this.clock();
  }

  /** The key's state as a directory at most `maxAgeMs` old holds it; undefined when it holds no such key. */
  async known(keyHash: string): Promise<ApiKeyState | undefined> {
    await this.loadedSince(this.clock() - (this.options.maxAgeMs ?? 1_000));
    return this.keys.get(keyHash);
  }

  /** The key's state from a load that started after `arrivedAt`: the answer for a key not known before. */
  async reloaded(keyHash: string, arrivedAt: number): Promise<ApiKeyState | undefined> {
    await this.loadedSince(arrivedAt);
    return this.keys.get(keyHash);
  }

  /** Resolves once the held keys come from a load that started at or after `instant`. */
  async loadedSince(instant: number): Promise<void> {
    while (this.loadedFrom < instant) {
      if (this.loading) {
        await this.loading.done.catch(() => undefined);
        // A failed load that started after `instant` is this caller's answer: the database is down.
        if (this.loadedFrom < instant && this.lastFailureFrom >= instant) throw this.lastError;
        continue;
      }
      const wait = this.lastStart + (this.options.minIntervalMs ?? 100) - this.clock();
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        continue;
      }
      this.start();
    }
  }

  private start() {
    const startedAt = this.clock();
    this.lastStart = startedAt;
    this.loads += 1;
    // Shared by every waiting call, so no one call's signal may cancel it; bounded on its own instead.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      const ms = this.options.loadTimeoutMs ?? 2_000;
      timer = setTimeout(() => reject(new Error(`key directory load slower than ${ms} ms`)), ms);
    });
    const done = Promise.race([withoutQuerySignal(() => this.load()), timeout]).then(
      (rows) => {
        this.keys = new Map(rows.map((row) => [row.keyHash, row]));
        this.loadedFrom = startedAt;
      },
      (error: unknown) => {
        this.lastError = error;
        this.lastFailureFrom = startedAt;
        throw error;
      },
    );
    const loading = { startedAt, done };
    this.loading = loading;
    done
      .finally(() => {
        clearTimeout(timer);
        if (this.loading === loading) this.loading = undefined;
      })
      .catch(() => undefined);
  }
}
