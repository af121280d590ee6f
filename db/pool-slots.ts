/** The acquire timeout postgres.js lacks (D-21); `holdMs` frees a slot whose work is stuck on a dead connection. */
export class PoolSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly size: number,
    private readonly waitMs: number,
    private readonly holdMs: number,
  ) {
    this.free = size;
  }

  /** Slots held now, and calls waiting for one (the pool's gauges). */
  stats() {
    return { size: this.size, inUse: this.size - this.free, waiting: this.waiting.length };
  }

  /** Runs `work` holding a slot; rejects with PoolBusyError if none frees up within the wait. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(limit);
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
    const limit = setTimeout(release, this.holdMs).unref();
    try {
      return await work();
    } finally {
      release();
    }
  }

  private acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        reject(new PoolBusyError(this.waitMs));
      }, this.waitMs);
      this.waiting.push(grant);
    });
  }
}

/** No slot of the pool became free within the wait (D-21); the call may be retried shortly. */
export class PoolBusyError extends Error {
  override name = 'PoolBusyError';
  /** What the answer's `Retry-After` says, in seconds. */
  readonly retryAfterSeconds = 1;
  constructor(waitMs: number) {
    super(`no database connection free within ${waitMs} ms`);
  }
}
