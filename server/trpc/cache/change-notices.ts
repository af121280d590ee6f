import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db, Listen } from '../../../db/client';
import type { Freshness } from './row-cache';

/** The channel db/migrations/0017_key_and_brand_change_notices.sql's triggers notify on. */
export const CACHE_CHANNEL = 'partner_api_cache';

/** What a statement wrote, as its trigger names it (db/migrations/0017_key_and_brand_change_notices.sql). */
export type ChangeNotice = {
  all?: true;
  keys?: string[];
  partners?: number[];
  brands?: string[];
  brand_partners?: number[];
};

export type ChangeNoticesOptions = {
  /** How often the listener's round trip is confirmed; the cache's age stays about this small. */
  beatMs?: number;
  /** A listen whose round trip has not come back for this long is made afresh. */
  relistenMs?: number;
  /** Monotonic milliseconds (performance.now); tests pin it. */
  clock?: () => number;
};

/**
 * The changes of keys, partners and brands, as the database notifies them (LISTEN), and how far back they are
 * known to be complete. A beat notified on the same channel comes back after every notice of a transaction
 * that committed before it (PostgreSQL delivers notices in commit order), so once the beat sent at T comes
 * back, every change committed before T has been handed to `onChange`. The beats also tell a listener that
 * went quiet from an idle one.
 */
export class ChangeNotices implements Freshness {
  private confirmed = Number.NEGATIVE_INFINITY;
  /** Beats sent and not yet back, by number: when each was sent. */
  private readonly beats = new Map<number, number>();
  private readonly instance = randomUUID();
  private sent = 0;
  /** Calls waiting for the beat of this number (or a later one) to come back. */
  private waiting: { beat: number; resolve: () => void }[] = [];
  private listening: Promise<{ unlisten(): Promise<void> }> | undefined;
  private relistening = false;
  private subscribedAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly control: Db,
    private readonly listen: Listen,
    /** A change: drop what it names. */
    private readonly onChange: (notice: ChangeNotice) => void,
    /** Listening (again): notices may have been missed before, so drop everything. */
    private readonly onListen: () => void,
    private readonly options: ChangeNoticesOptions = {},
  ) {}

  now(): number {
    return this.options.clock ? this.options.clock() : performance.now();
  }

  confirmedFrom(): number {
    return this.confirmed;
  }

  /** How far back every change is known to have arrived, in ms; Infinity before the first beat came back. */
  ageMs(): number {
    return this.now() - this.confirmed;
  }

  /**
   * Listens and beats from now on; resolves once the first beat came back, rejects if the first listen
   * fails (a start against a database it cannot reach stops there). Called again, it only waits.
   */
  start(): Promise<void> {
    const caught = this.caughtUp();
    return Promise.race([caught, (this.listening ?? Promise.resolve()).then(() => caught)]);
  }

  /** Resolves once every change committed before the call has arrived (a beat sent after it came back). */
  caughtUp(): Promise<void> {
    if (!this.timer && !this.stopped) {
      this.timer = setInterval(() => this.tick(), this.options.beatMs ?? 250);
      this.timer.unref();
      this.subscribe();
    }
    const beat = this.beat();
    return new Promise<void>((resolve) => this.waiting.push({ beat, resolve }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const listening = this.listening;
    this.listening = undefined;
    await listening?.then((listen) => listen.unlisten()).catch(() => undefined);
  }

  private subscribe() {
    this.subscribedAt = this.now();
    const listening = this.listen(
      CACHE_CHANNEL,
      (payload) => this.notified(payload),
      () => this.listened(),
    );
    listening.catch(() => undefined);
    this.listening = listening;
  }

  private listened() {
    // A beat sent before this listen may come back after notices this instance never saw.
    this.beats.clear();
    this.onListen();
    this.beat();
  }

  private tick() {
    const quietSince = Math.max(this.confirmed, this.subscribedAt);
    if (this.now() - quietSince > (this.options.relistenMs ?? 5_000)) this.relisten();
    this.beat();
  }

  /** A listen that fails or has gone quiet is made afresh (postgres.js listens again itself after a reconnect). */
  private relisten() {
    const listening = this.listening;
    if (this.relistening || this.stopped || !listening) return;
    this.relistening = true;
    listening
      .then((listen) => listen.unlisten())
      .catch(() => undefined)
      .finally(() => {
        this.relistening = false;
        if (!this.stopped && this.listening === listening) this.subscribe();
      });
  }

  /** Sends a beat; its number. */
  private beat(): number {
    this.sent += 1;
    const sent = this.sent;
    if (this.stopped) return sent;
    this.beats.set(sent, this.now());
    const payload = JSON.stringify({ beat: `${this.instance}:${sent}` });
    // A beat lost with its connection is simply not confirmed; the next one is.
    this.control.execute(sql`SELECT pg_notify(${CACHE_CHANNEL}, ${payload})`).catch(() => {
      this.beats.delete(sent);
    });
    return sent;
  }

  private notified(payload: string) {
    let notice: ChangeNotice & { beat?: string };
    try {
      notice = JSON.parse(payload);
    } catch {
      return this.onChange({ all: true });
    }
    if (notice.beat === undefined) return this.onChange(notice);
    const [instance, number] = notice.beat.split(':');
    const beat = Number(number);
    const sentAt = instance === this.instance ? this.beats.get(beat) : undefined;
    if (sentAt === undefined) return; // another instance's, or sent before the listen
    for (const sent of this.beats.keys()) if (sent <= beat) this.beats.delete(sent);
    this.confirmed = Math.max(this.confirmed, sentAt);
    const waiting = this.waiting;
    this.waiting = [];
    for (const waiter of waiting) {
      if (waiter.beat <= beat) waiter.resolve();
      else this.waiting.push(waiter);
    }
  }
}
