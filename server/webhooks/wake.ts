import type { Listen } from '../../db/client';
import type { Logger } from '../logger';

/** The channel db/migrations/0019_webhook_wake_notices.sql's triggers notify on. */
export const WAKE_CHANNEL = 'webhook_wake';

export type WakeOptions = {
  /** LISTEN on the database; without it, only the poll runs passes. */
  listen?: Listen | undefined;
  /** A notice's pass starts this long after it, so a burst of commits is one pass. */
  settleMs: number;
  /** The fallback: a pass at least this often, for notices missed while the listen was down. */
  pollMs: number;
  log: Logger;
};

/**
 * When the webhook worker runs a pass (D-28): shortly after the database notifies a change, at the time the
 * worker asks for (a retry coming due), and on a slow poll otherwise. Passes never overlap: a notice that
 * arrives during one is answered by another right after it.
 */
export class WakeSchedule {
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (performance.now), Infinity when none is armed. */
  private firesAt = Number.POSITIVE_INFINITY;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private listening: Promise<{ unlisten(): Promise<void> }> | undefined;

  constructor(
    private readonly pass: () => Promise<void>,
    /** A notice's payload, before its pass is asked for. */
    private readonly notified: (payload: string) => void,
    /** The listen took effect (again): changes committed before it were not notified. */
    private readonly listened: () => void,
    private readonly options: WakeOptions,
  ) {}

  /** Listens and runs the first pass; resolves once the listen took effect (or failed, or there is none). */
  start(): Promise<void> {
    this.subscribe();
    this.runNow();
    return (this.listening ?? Promise.resolve()).then(
      () => undefined,
      () => undefined,
    );
  }

  /** A change was notified: a pass soon, or right after the one under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.within(this.options.settleMs);
  }

  /** A pass no later than `ms` from now. */
  within(ms: number): void {
    if (this.stopped) return;
    const at = performance.now() + Math.max(0, ms);
    if (at >= this.firesAt) return;
    clearTimeout(this.timer);
    this.firesAt = at;
    this.timer = setTimeout(() => this.fire(), at - performance.now());
    this.timer.unref();
  }

  /** Stops waking; resolves once the pass under way (if any) ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const listening = this.listening;
    this.listening = undefined;
    await Promise.all([this.running, listening?.then((listen) => listen.unlisten()).catch(() => undefined)]);
  }

  private fire() {
    this.timer = undefined;
    this.firesAt = Number.POSITIVE_INFINITY;
    if (this.running) {
      this.again = true;
      return;
    }
    // A listen that failed is tried again with each poll.
    if (!this.listening) this.subscribe();
    this.runNow();
  }

  private runNow() {
    if (this.stopped) return;
    this.again = false;
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) this.within(this.options.settleMs);
      this.within(this.options.pollMs);
    });
  }

  private subscribe() {
    const { listen, log } = this.options;
    if (!listen || this.stopped) return;
    // Listening (again, after a reconnect): notices may have been missed meanwhile, so a pass.
    const listening = listen(
      WAKE_CHANNEL,
      (payload) => {
        this.notified(payload);
        this.wake();
      },
      () => {
        this.listened();
        this.wake();
      },
    );
    this.listening = listening;
    listening.catch((error: unknown) => {
      if (this.listening === listening) this.listening = undefined;
      log.warn({ error }, 'webhook delivery cannot listen for changes; polling until it can');
    });
  }
}
