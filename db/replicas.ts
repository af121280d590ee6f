import { sql } from 'drizzle-orm';
import { withoutQuerySignal } from './cancellation';
import type { DatabaseHandle, Db } from './client';
import {
  judge,
  keepSamples,
  parseWalPosition,
  type ReplicaProbe,
  type Verdict,
  type WalSample,
} from './replica-rotation';

/** One replica: its own handle (a request pool with the gate of D-21, and a control client for its checks). */
export type Replica = {
  /** Its place in DATABASE_REPLICA_URLS, from 0: how logs and metrics name it (never its URL). */
  index: number;
  db: Db;
  handle: DatabaseHandle;
  verdict: Verdict;
};

export type ReplicaEvents = {
  left(replica: number, reason: string, detail: { lagMs?: number | undefined; error?: unknown }): void;
  returned(replica: number, detail: { lagMs: number }): void;
};

/**
 * The read replicas of D-23 and their rotation. Every `checkMs` the primary's WAL position is sampled (on
 * its control client) and each replica is asked, on its own control client, whether it is a standby and
 * how far it has replayed; db/replica-rotation.ts judges it from that. A check that does not answer within
 * `checkMs` counts as unreachable. A request's connection failure on a replica takes it out at once
 * (`lost`); only a check brings it back. Until its first good check a replica is out of rotation, so an
 * instance never reads from one it has not seen.
 */
export class ReadReplicas {
  readonly replicas: Replica[];
  private samples: WalSample[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly probing = new Map<number, Promise<ReplicaProbe>>();
  /** Calls waiting on a replica, told when it is found unreachable. */
  private readonly waiting = new Map<Replica, Set<() => void>>();
  private closed = false;

  constructor(
    private readonly primary: DatabaseHandle,
    handles: DatabaseHandle[],
    private readonly options: {
      maxLagMs: number;
      checkMs: number;
      events?: Partial<ReplicaEvents>;
      clock?: () => number;
    },
  ) {
    this.replicas = handles.map((handle, index) => ({
      index,
      db: handle.db,
      handle,
      verdict: { inRotation: false, reason: 'unreachable' },
    }));
  }

  private get clock() {
    return this.options.clock ?? (() => performance.now());
  }

  /** Checks now, then every `checkMs` until closed. Resolves once the first check is done. */
  async start(): Promise<void> {
    await this.check();
    const tick = () => {
      if (this.closed) return;
      this.timer = setTimeout(() => void this.check().finally(tick), this.options.checkMs);
      this.timer.unref();
    };
    tick();
  }

  /** The replica a call reads from (in turn among those in rotation), or undefined: read the primary. */
  pick(): Replica | undefined {
    const serving = this.replicas.filter((replica) => replica.verdict.inRotation);
    if (serving.length === 0) return undefined;
    this.next = (this.next + 1) % serving.length;
    return serving[this.next];
  }

  /** A call lost its connection to `replica`: it leaves rotation until a check finds it well. */
  lost(replica: Replica, error: unknown): void {
    if (!replica.verdict.inRotation) return;
    replica.verdict = { inRotation: false, reason: 'unreachable' };
    this.options.events?.left?.(replica.index, 'connection failed', { error });
    this.unreachable(replica);
  }

  /**
   * Resolves when `replica` is next found unreachable (a check or a call lost it), so a call waiting on it
   * can go to the primary; `cancel` once the call no longer waits. Never rejects.
   */
  whenUnreachable(replica: Replica): Promise<void> & { cancel: () => void } {
    let listener = () => {};
    const found = new Promise<void>((resolve) => {
      listener = resolve;
    });
    const listeners = this.waiting.get(replica) ?? new Set();
    this.waiting.set(replica, listeners);
    listeners.add(listener);
    return Object.assign(found, {
      cancel: () => {
        listeners.delete(listener);
        if (listeners.size === 0 && this.waiting.get(replica) === listeners) this.waiting.delete(replica);
      },
    });
  }

  private unreachable(replica: Replica) {
    for (const listener of this.waiting.get(replica) ?? []) listener();
  }

  /** How many replicas are in rotation now. */
  inRotation(): number {
    return this.replicas.filter((replica) => replica.verdict.inRotation).length;
  }

  /** One round: the primary's position first, then every replica against it. */
  async check(): Promise<void> {
    const { maxLagMs, checkMs } = this.options;
    const sample = await this.within(this.primaryPosition(), checkMs).catch(() => undefined);
    // The primary unreachable: the replicas are judged against what it was seen to have written.
    if (sample) this.samples = keepSamples(this.samples, sample, maxLagMs + 2 * checkMs);
    await Promise.all(
      this.replicas.map(async (replica) => {
        const probe = await this.probe(replica);
        if (this.closed) return;
        const was = replica.verdict;
        replica.verdict = judge(this.samples, probe, maxLagMs);
        const now = replica.verdict;
        if (was.inRotation && !now.inRotation)
          this.options.events?.left?.(replica.index, now.reason, { lagMs: now.lagMs });
        if (!was.inRotation && now.inRotation) this.options.events?.returned?.(replica.index, { lagMs: now.lagMs });
        if (!now.inRotation && now.reason === 'unreachable') this.unreachable(replica);
      }),
    );
  }

  /** Stops the checks and closes every replica's clients (each within its close bound). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    for (const replica of this.replicas) replica.verdict = { inRotation: false, reason: 'unreachable' };
    this.waiting.clear();
    await Promise.all(this.replicas.map((replica) => replica.handle.close()));
  }

  private async primaryPosition(): Promise<WalSample> {
    // Timers carry no request's signal, but the checks are no request's work wherever they start.
    const [row] = await withoutQuerySignal(
      async () => await this.primary.control.execute(sql`SELECT pg_current_wal_lsn()::text AS position`),
    ).then((result) => result as unknown as { position: string }[]);
    if (!row) throw new Error('no WAL position');
    return { at: this.clock(), position: parseWalPosition(row.position) };
  }

  /**
   * One question to the replica, at most one at a time: a probe still unanswered from the last round
   * (a stalled connection) is not asked again behind itself; the replica is unreachable meanwhile.
   */
  private async probe(replica: Replica): Promise<ReplicaProbe> {
    const unreachable = (): ReplicaProbe => ({ at: this.clock(), reachable: false });
    if (this.probing.has(replica.index)) return unreachable();
    const asked = withoutQuerySignal(
      async () =>
        await replica.handle.control.execute(
          sql`SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed`,
        ),
    ).then((result): ReplicaProbe => {
      const [row] = result as unknown as { standby: boolean; replayed: string | null }[];
      return {
        at: this.clock(),
        reachable: true,
        standby: row?.standby === true,
        replayed: row?.replayed ? parseWalPosition(row.replayed) : null,
      };
    });
    this.probing.set(replica.index, asked);
    asked
      .finally(() => {
        if (this.probing.get(replica.index) === asked) this.probing.delete(replica.index);
      })
      .catch(() => undefined);
    return this.within(asked, this.options.checkMs).catch(unreachable);
  }

  private async within<T>(work: Promise<T>, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
