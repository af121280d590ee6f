import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import type { DatabaseHandle } from './client';
import { CONNECT_CODES, causeChain } from './failure';

export type Replica = { index: number; handle: DatabaseHandle; usable: boolean };

/** What the probes read time from: the process's clock, or a test's. */
export type ProbeClock = {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Resolves once `ms` have passed. */
  elapsed(ms: number): Promise<void>;
};

const processClock: ProbeClock = {
  now: () => performance.now(),
  elapsed: (ms) => delay(ms, undefined, { ref: false }),
};

/** The read replicas of D-23: `pick()` a usable one in turn, probed every `checkMs` against `maxLagMs`. */
export class Replicas {
  readonly replicas: Replica[];
  /** The primary's WAL position, sampled each round, newest last: what a replica is judged against. */
  private written: { at: number; position: string }[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly primary: DatabaseHandle,
    handles: DatabaseHandle[],
    private readonly options: {
      maxLagMs: number;
      checkMs: number;
      /** The first probe opens the connections, so it waits as long as a connection may take to open. */
      connectTimeoutMs?: number;
      onChange?: (replica: number, usable: boolean, reason: string) => void;
      clock?: ProbeClock;
    },
  ) {
    this.replicas = handles.map((handle, index) => ({ index, handle, usable: false }));
  }

  async start(): Promise<void> {
    await this.check(Math.max(this.options.checkMs, this.options.connectTimeoutMs ?? 0));
    this.timer = setInterval(() => void this.check(), this.options.checkMs).unref();
  }

  pick(): Replica | undefined {
    const usable = this.replicas.filter((replica) => replica.usable);
    this.next = (this.next + 1) % Math.max(1, usable.length);
    return usable[this.next];
  }

  failed(replica: Replica): void {
    this.set(replica, false, 'connection failed');
  }

  usable(): number {
    return this.replicas.filter((replica) => replica.usable).length;
  }

  /** One probe: a server that has not answered within `answerMs` (the interval) is unreachable. */
  async check(answerMs = this.options.checkMs): Promise<void> {
    const now = this.clock.now();
    const asked = this.primary.control.execute(sql`SELECT pg_current_wal_lsn()::text AS position`);
    const [row] = await this.within(asked, answerMs).then(
      (rows) => rows as unknown as { position: string }[],
      () => [],
    );
    if (row) this.written.push({ at: now, position: row.position });
    const bound = this.written.findLastIndex((sample) => sample.at <= now - this.options.maxLagMs);
    this.written = this.written.slice(Math.max(0, bound));
    const reference = this.written[0]?.position;
    await Promise.all(
      this.replicas.map(async (replica) => {
        const probe = this.within(
          replica.handle.control.execute(
            sql`SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn() >= ${reference ?? '0/0'}::pg_lsn AS caught_up`,
          ),
          answerMs,
        ).then(
          (result) => {
            const [row] = result as unknown as { standby: boolean; caught_up: boolean | null }[];
            return !row?.standby ? 'not a standby' : row.caught_up ? 'well' : 'behind';
          },
          () => 'unreachable',
        );
        const verdict = reference === undefined ? 'primary position unknown' : await probe;
        this.set(replica, verdict === 'well', verdict);
      }),
    );
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const replica of this.replicas) replica.usable = false;
    await Promise.all(this.replicas.map((replica) => replica.handle.close()));
  }

  private set(replica: Replica, usable: boolean, reason: string) {
    if (replica.usable !== usable) this.options.onChange?.(replica.index, usable, reason);
    replica.usable = usable;
  }

  private get clock(): ProbeClock {
    return this.options.clock ?? processClock;
  }

  private async within<T>(work: Promise<T>, ms: number): Promise<T> {
    const late = this.clock.elapsed(ms).then(() => Promise.reject(new Error(`no answer within ${ms} ms`)));
    return Promise.race([work, late]);
  }
}

/** Socket and postgres.js codes of a connection that failed or went away. */
const CONNECTION_CODES = new Set([...Object.keys(CONNECT_CODES), 'EPIPE']);

/** D-23: `lost` (unreachable), `conflict` (cancelled by replay) and `behind` (short of a cursor) run on the primary. */
export function replicaFailureIn(error: unknown): 'lost' | 'conflict' | 'behind' | undefined {
  for (const cause of causeChain(error)) {
    if (cause instanceof ReplicaBehindError) return 'behind';
    const { code } = cause;
    if (typeof code !== 'string') continue;
    if (CONNECTION_CODES.has(code) || /^(08...|57P0[123]|53300)$/.test(code)) return 'lost';
    if (code === '40001' || code === '40P01') return 'conflict';
  }
  return undefined;
}

/** A read whose server has not yet replayed what its cursor has seen (D-26): it runs again on the primary. */
export class ReplicaBehindError extends Error {
  constructor() {
    super('the server has not reached the position asked for');
    this.name = 'ReplicaBehindError';
  }
}
