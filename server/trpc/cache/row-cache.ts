/** What a row cache answers by: its clock, and the instant up to which every change has reached it. */
export type Freshness = {
  /** Monotonic milliseconds (performance.now), independent of the business clock tests pin. */
  now(): number;
  /** Every change committed before this instant has been applied (dropped) here. */
  confirmedFrom(): number;
};

export type RowCacheOptions = {
  /** A held row is answered while the cache is confirmed at most this old (D-14: 1 s). */
  maxAgeMs?: number;
  /** A lookup not done by then is given up, so one stuck statement cannot hold every call (D-20). */
  lookupTimeoutMs?: number;
  /** At most this many names a statement. */
  batchSize?: number;
};

type Held<Entry> = { entry: Entry; readFrom: number; used: boolean };
type Waiter<Entry> = { resolve(entry: Entry | undefined): void; reject(error: unknown): void };

/**
 * Rows held in memory by name, each read by itself when first asked for. Names asked for together share
 * one statement, one statement at a time, so any flood of unknown names costs one statement in flight.
 * A row is answered from memory only while every change up to `maxAgeMs` ago is known to have dropped
 * it (`freshness`); past that, each call reads its row again.
 */
export class RowCache<Name, Entry> {
  private readonly held = new Map<Name, Held<Entry>>();
  /** Names calls wait for: the next statement's. */
  private readonly wanted = new Map<Name, Waiter<Entry>[]>();
  /** Held names the backstop reads again, after every name a call waits for. */
  private readonly rereads = new Set<Name>();
  /** The statement running: a name dropped meanwhile, or everything when `generation` moved, is not kept. */
  private running: { names: ReadonlySet<Name>; dropped: Set<Name>; generation: number } | undefined;
  private generation = 0;
  /** Statements made, for tests. */
  lookups = 0;

  constructor(
    private readonly lookup: (names: Name[]) => Promise<ReadonlyMap<Name, Entry>>,
    private readonly freshness: Freshness,
    private readonly options: RowCacheOptions = {},
  ) {}

  /** Now, on the cache's clock: what a call notes as its arrival. */
  now(): number {
    return this.freshness.now();
  }

  /** How many rows are held. */
  get size(): number {
    return this.held.size;
  }

  /** The row held, while the cache is fresh; undefined when none is held or it may be stale. */
  heldEntry(name: Name): Entry | undefined {
    const held = this.held.get(name);
    if (!held || this.freshness.confirmedFrom() < this.now() - (this.options.maxAgeMs ?? 1_000)) return undefined;
    held.used = true;
    return held.entry;
  }

  /** The row held while fresh, else read for this call; undefined when the database has none. */
  get(name: Name): Promise<Entry | undefined> {
    const arrivedAt = this.now();
    const held = this.heldEntry(name);
    return held === undefined ? this.lookedUp(name, arrivedAt) : Promise.resolve(held);
  }

  /** The row as a statement that started at or after `arrivedAt` read it: the answer for a row not held. */
  lookedUp(name: Name, arrivedAt: number): Promise<Entry | undefined> {
    const held = this.held.get(name);
    if (held && held.readFrom >= arrivedAt) {
      held.used = true;
      return Promise.resolve(held.entry);
    }
    return new Promise((resolve, reject) => {
      const waiters = this.wanted.get(name);
      if (waiters) waiters.push({ resolve, reject });
      else this.wanted.set(name, [{ resolve, reject }]);
      this.pump();
    });
  }

  /** These rows changed: they are read again when next asked for. */
  drop(names: Iterable<Name>): void {
    for (const name of names) {
      this.held.delete(name);
      this.rereads.delete(name);
      if (this.running?.names.has(name)) this.running.dropped.add(name);
    }
  }

  /** The rows `changed` picks changed (a partner's keys): read again when next asked for. */
  dropWhere(changed: (entry: Entry) => boolean): void {
    for (const [name, held] of this.held) if (changed(held.entry)) this.drop([name]);
    this.generation += 1;
  }

  /** Anything may have changed: every row is read again when next asked for. */
  dropAll(): void {
    this.held.clear();
    this.rereads.clear();
    this.generation += 1;
  }

  /**
   * The backstop: rows no call asked for since the last sweep are let go, the others read again in the
   * background, after the rows calls wait for, so a change that reached no notice is held at most this long.
   */
  sweep(): void {
    for (const [name, held] of this.held) {
      if (held.used) {
        held.used = false;
        this.rereads.add(name);
      } else this.held.delete(name);
    }
    this.pump();
  }

  private pump(): void {
    if (this.running) return;
    const batchSize = this.options.batchSize ?? 500;
    const names: Name[] = [];
    for (const name of this.wanted.keys()) {
      if (names.length === batchSize) break;
      names.push(name);
    }
    for (const name of this.rereads) {
      if (names.length === batchSize) break;
      if (!this.wanted.has(name)) names.push(name);
    }
    if (!names.length) return;
    const waiters = new Map<Name, Waiter<Entry>[]>();
    for (const name of names) {
      waiters.set(name, this.wanted.get(name) ?? []);
      this.wanted.delete(name);
      this.rereads.delete(name);
    }
    const run = { names: new Set(names), dropped: new Set<Name>(), generation: this.generation };
    this.running = run;
    this.lookups += 1;
    const startedAt = this.now();
    const ms = this.options.lookupTimeoutMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`cache lookup slower than ${ms} ms`)), ms);
    });
    Promise.race([this.lookup(names), timeout])
      .then(
        (found) => {
          const keep = run.generation === this.generation;
          for (const [name, named] of waiters) {
            const entry = found.get(name);
            if (keep && !run.dropped.has(name)) {
              const used = named.length > 0 || this.held.get(name)?.used === true;
              if (entry === undefined) this.held.delete(name);
              else this.held.set(name, { entry, readFrom: startedAt, used });
            }
            for (const waiter of named) waiter.resolve(entry);
          }
        },
        (error: unknown) => {
          for (const named of waiters.values()) for (const waiter of named) waiter.reject(error);
        },
      )
      .finally(() => {
        clearTimeout(timer);
        this.running = undefined;
        this.pump();
      });
  }
}
