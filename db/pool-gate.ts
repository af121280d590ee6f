import { AsyncLocalStorage } from 'node:async_hooks';
import { QueryAbortedError } from './cancellation';

/**
 * The request pool's admission (D-21). postgres.js has no acquire timeout: a statement that finds every
 * connection busy is pipelined behind another statement on one of them and waits as long as that one
 * does (a locked table then holds up calls that never read it). So every statement of the request pool
 * first takes one of `size` permits, one per connection, and only then reaches postgres.js, which thus
 * always finds an idle connection:
 * - the wait for a permit is bounded (`waitMs`); past it the statement fails with PoolBusyError, which the
 *   API answers with the 500 envelope and `Retry-After`, long before the request's deadline;
 * - a lane (the resource a call reads, set by the procedure) holds at most half the permits, and every lane
 *   seen that holds none keeps one permit in reserve: a slow or locked table read by several resources
 *   (every report joins shops) cannot take the last permit of a resource that never reads it;
 * - a waiter whose query signal aborts (the client has gone, the deadline passed) leaves the queue at once;
 * - a permit is held until its statement settles, so a stalled database holds them all and new calls fail
 *   after the wait instead of each holding its socket to the deadline; but no longer than `holdLimitMs`
 *   (connecting plus the statement timeout, and a margin): a statement still pending then is on a dead
 *   connection (postgres.js can leave a statement pending for good on a connection reset by the network),
 *   and its permit must not be lost with it. A transaction takes its permit without that limit: it may
 *   outlive any one statement (the daily build lifts the statement timeout), and its connection is busy
 *   until it ends.
 */
export class PoolGate {
  private inUse = 0;
  private readonly lanes = new Map<string, number>();
  /** Every lane seen, for the reserve each idle one keeps. */
  private readonly known = new Set<string>();
  private readonly waiters: Waiter[] = [];
  private closed = false;
  readonly laneLimit: number;

  constructor(
    readonly size: number,
    /** Unset: wait as long as it takes (the CLIs' migrations and loads). */
    private readonly waitMs?: number,
    /** Unset: a permit is held until its statement settles, however long. */
    private readonly holdLimitMs?: number,
  ) {
    this.laneLimit = Math.max(1, Math.ceil(size / 2));
  }

  /** What the pool holds now, for gauges. */
  stats(): PoolStats {
    return { size: this.size, inUse: this.inUse, waiting: this.waiters.length };
  }

  /**
   * Resolves with the function that gives the permit back (call it once, when the statement settles);
   * rejects with PoolBusyError after the wait, QueryAbortedError when `signal` aborts, PoolClosedError
   * once closed.
   */
  acquire(lane = statementLane(), signal?: AbortSignal, { holdLimit = true } = {}): Promise<() => void> {
    if (this.closed) return Promise.reject(new PoolClosedError());
    if (lane !== undefined) this.known.add(lane);
    if (signal?.aborted) return Promise.reject(new QueryAbortedError(signal.reason));
    // Queued, then admitted at once if it fits: waiters ahead of it whose lane is full do not hold it up.
    const admitted = new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = { lane, holdLimit, grant: resolve, fail: reject, leave: () => {} };
      const onAbort = () => waiter.fail(new QueryAbortedError(signal?.reason));
      const timer =
        this.waitMs === undefined
          ? undefined
          : setTimeout(() => waiter.fail(new PoolBusyError(this.waitMs ?? 0)), this.waitMs);
      waiter.leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
      };
      waiter.grant = (release) => {
        waiter.leave();
        resolve(release);
      };
      waiter.fail = (error) => {
        waiter.leave();
        reject(error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
    this.admitWaiting();
    return admitted;
  }

  /** Fails every waiter and every later acquire: the pool is closing. */
  close() {
    this.closed = true;
    for (const waiter of [...this.waiters]) waiter.fail(new PoolClosedError());
  }

  private fits(lane: string | undefined) {
    if (this.inUse >= this.size) return false;
    const held = lane === undefined ? 0 : (this.lanes.get(lane) ?? 0);
    if (held >= this.laneLimit) return false;
    if (lane !== undefined && held === 0) return true;
    // Other lanes that hold nothing keep one permit each.
    let reserved = 0;
    for (const other of this.known) if (other !== lane && !this.lanes.has(other)) reserved += 1;
    return this.size - this.inUse > reserved;
  }

  private take(lane: string | undefined, holdLimit = true): () => void {
    this.inUse += 1;
    if (lane !== undefined) this.lanes.set(lane, (this.lanes.get(lane) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(limit);
      this.inUse -= 1;
      if (lane !== undefined) {
        const held = (this.lanes.get(lane) ?? 1) - 1;
        if (held > 0) this.lanes.set(lane, held);
        else this.lanes.delete(lane);
      }
      this.admitWaiting();
    };
    const limit =
      this.holdLimitMs === undefined || !holdLimit ? undefined : setTimeout(release, this.holdLimitMs).unref();
    return release;
  }

  /** In arrival order, skipping waiters whose lane is full (their resource is the slow one). */
  private admitWaiting() {
    for (const waiter of [...this.waiters]) {
      if (this.inUse >= this.size) return;
      if (this.fits(waiter.lane)) waiter.grant(this.take(waiter.lane, waiter.holdLimit));
    }
  }
}

type Waiter = {
  lane: string | undefined;
  holdLimit: boolean;
  grant: (release: () => void) => void;
  fail: (error: Error) => void;
  leave: () => void;
};

export type PoolStats = { size: number; inUse: number; waiting: number };

/** No connection of the pool became free within the wait (D-21); the call may be retried shortly. */
export class PoolBusyError extends Error {
  override name = 'PoolBusyError';
  /** What the answer's `Retry-After` says, in seconds. */
  readonly retryAfterSeconds = 1;
  constructor(waitMs: number) {
    super(`no database connection free within ${waitMs} ms`);
  }
}

export class PoolClosedError extends Error {
  override name = 'PoolClosedError';
  constructor() {
    super('database pool closed');
  }
}

/** The PoolBusyError anywhere in an error's cause chain (drizzle and tRPC wrap what the driver threw). */
export function poolBusyIn(error: unknown): PoolBusyError | undefined {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 6; depth++) {
    if (current instanceof PoolBusyError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

const lanes = new AsyncLocalStorage<string>();

/**
 * Runs `work` (awaited inside, as drizzle's queries start when awaited) with its statements in `lane`:
 * the resource they read, so that one slow resource cannot hold more than its share of the pool.
 */
export function withStatementLane<T>(lane: string, work: () => PromiseLike<T>): Promise<T> {
  return lanes.run(lane, async () => await work());
}

/** The lane of the work in progress, if any. */
export function statementLane(): string | undefined {
  return lanes.getStore();
}
