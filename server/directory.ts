/**
 * A small table held in memory and reloaded whole from the database, so that a lookup on every call
 * costs no round trip and no caller can make it cost one per call (D-14, D-20: no
 * per-request round trips). Two are kept (server/services.ts): every API key's state, and every brand's
 * identity (which partner it belongs to).
 *
 * - Freshness, the one bound: a call never sees a directory older than `maxAgeMs` (1 s). A key revoked, a
 *   partner deactivated, a brand removed from a partner: every instance acts on it within that. What a
 *   directory holds is judged against the call's own clock (a key's expiry is exact).
 * - Once the held entries are half that old, the next call starts a load in the background and is
 *   answered from them, so under steady traffic no call waits for a load.
 * - An entry the directory does not hold may have been added since the last load: the call waits for a
 *   load that started after it arrived, then is judged. Loads are single-flight and at least
 *   `minIntervalMs` apart, so a flood of unknown names, from one address or many, costs the database at
 *   most one small query per `minIntervalMs`, never one per call. A valid key or brand is therefore
 *   never refused for lack of a lookup, whatever others send.
 * - `clock` is monotonic milliseconds (performance.now), independent of the business clock tests pin.
 * The tables are small (a few keys and brands per partner); reloading them whole keeps this exact and
 * simple.
 */
export class Directory<Entry> {
  private entries = new Map<string, Entry>();
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
    private readonly load: () => Promise<Map<string, Entry>>,
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

  /** How old the held entries are (since their load started), in ms; Infinity before the first load. */
  ageMs(): number {
    return this.clock() - this.loadedFrom;
  }

  /** Now, on the directory's clock: what a call notes as its arrival. */
  now(): number {
    return this.clock();
  }

  /** The entry as a directory at most `maxAgeMs` old holds it; undefined when it holds none of that name. */
  async known(name: string): Promise<Entry | undefined> {
    return (await this.all()).get(name);
  }

  /** Every entry of a directory at most `maxAgeMs` old, in the order its load gave them. */
  async all(): Promise<ReadonlyMap<string, Entry>> {
    const now = this.clock();
    const maxAgeMs = this.options.maxAgeMs ?? 1_000;
    // Refresh ahead: the held entries still answer this call; the next ones get a load that is ready.
    if (now - this.loadedFrom >= maxAgeMs / 2 && !this.loading && now - this.lastStart >= this.minIntervalMs)
      this.start();
    await this.loadedSince(now - maxAgeMs);
    return this.entries;
  }

  /** The entry from a load that started after `arrivedAt`: the answer for a name not known before. */
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
        await this.loading.done.catch(() => undefined);
        // A failed load that started after `instant` is this caller's answer: the database is down.
        if (this.loadedFrom < instant && this.lastFailureFrom >= instant) throw this.lastError;
        continue;
      }
      const wait = this.lastStart + this.minIntervalMs - this.clock();
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
    // Shared by every waiting call, so bounded on its own, not by any one call's deadline.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      const ms = this.options.loadTimeoutMs ?? 2_000;
      timer = setTimeout(() => reject(new Error(`directory load slower than ${ms} ms`)), ms);
    });
    const done = Promise.race([this.load(), timeout]).then(
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
