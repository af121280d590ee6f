import type { Db } from '../db/client';
import { oldestFeedHolder } from '../db/queries/feed-holder';
import type { Logger } from './logger';

/** How often the primary is asked what holds the feed back. */
const CHECK_MS = 5_000;

type Options = {
  db: Db;
  log: Logger;
  /** Past this, one log line names the transaction (FEED_STALL_WARN_SECONDS). */
  warnSeconds: number;
  checkMs?: number;
  /** Monotonic milliseconds; tests drive it. */
  clock?: () => number;
};

/**
 * How long the oldest open transaction on the primary has held the review change feed back (D-26): read
 * by the metric, and named in one log line per transaction once past `warnSeconds`. Where the service's
 * role may not read a transaction's start, its age counts from when this watch first saw it.
 */
export class FeedStallWatch {
  private held = 0;
  private seen: { xid: string; at: number } | undefined;
  private warned: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<number> | undefined;

  constructor(private readonly options: Options) {}

  heldBackSeconds(): number {
    return this.held;
  }

  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.options.checkMs ?? CHECK_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
  }

  /** One look at the primary; resolves to the seconds held back. Never throws. */
  check(): Promise<number> {
    this.checking ??= this.look().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async look(): Promise<number> {
    const { db, log, warnSeconds } = this.options;
    const now = this.options.clock ? this.options.clock() : performance.now();
    try {
      const holder = await oldestFeedHolder(db);
      if (!holder) {
        this.seen = undefined;
        this.held = 0;
        return 0;
      }
      if (this.seen?.xid !== holder.xid) this.seen = { xid: holder.xid, at: now };
      this.held = Math.max(0, holder.seconds ?? (now - this.seen.at) / 1000);
      if (this.held >= warnSeconds && this.warned !== holder.xid) {
        this.warned = holder.xid;
        const { xid, pid, database, application, gid } = holder;
        const heldSeconds = Math.round(this.held);
        log.warn(
          { xid, pid, database, application, gid, heldSeconds },
          'review change feed held back by an open transaction',
        );
      }
    } catch (error) {
      log.debug({ error }, 'could not read what holds the review change feed back');
    }
    return this.held;
  }
}
