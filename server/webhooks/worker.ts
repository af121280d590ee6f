import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToCalls } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import type { Db, Listen } from '../../db/client';
import type { BrandScope } from '../../db/queries/brands';
import {
  type ChangesPosition,
  currentChangesPosition,
  feedHorizon,
  latestTransaction,
  loadFeedCursorKey,
  readRecordedChanges,
} from '../../db/queries/review-changes';
import {
  type AttemptRecord,
  type ClaimedDelivery,
  claimDeliveries,
  dropMovedBrands,
  nextDueAt,
  oldestPending,
  recordAttempts,
  recordEvents,
  releaseDeliveries,
  renewLeases,
} from '../../db/queries/webhook-deliveries';
import {
  brandsOfEndpoint,
  listEndpoints,
  positionsOf,
  setEndpointStatus,
  type WebhookEndpoint,
} from '../../db/queries/webhooks';
import { secretsInUse } from '../../db/webhook-secrets';
import { parseConfig } from '../config';
import type { Logger } from '../logger';
import { metrics } from '../trpc/metrics';
import { ATTEMPT_TIMEOUT_MS, type AttemptOutcome, postDelivery, ReceiverConnections } from './attempt';
import { feedExpiredEvent, reviewEvents } from './events';
import { DeliveryPace } from './pace';
import { signedHeaders } from './sign';
import { checkTarget } from './target';
import { WakeSchedule } from './wake';

// Webhook delivery (D-28), a background worker of every instance. Each endpoint reads the review change
// feed from its own stored position and turns what it reads into events; instances coordinate through
// PostgreSQL alone: moving a position is a compare-and-set, and an event is held through a lease on its row
// while it is attempted, outside any transaction. A slow receiver holds its own endpoint's loop only.
// A pass runs when the database notifies a change (server/webhooks/wake.ts), when a retry comes due, and on
// a slow poll that covers notices missed while the listen was down.

/** The Standard Webhooks specification's schedule: attempt n waits RETRY_SCHEDULE_MS[n - 1] after the last. */
export const RETRY_SCHEDULE_MS = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
];

/** How an attempt went, as the attempts metric counts it: a 2xx, another status, or no answer. */
export type AttemptCount = 'delivered' | 'rejected' | 'failed';

export type WorkerOptions = {
  db: Db;
  log: Logger;
  secretsKey: Buffer;
  allowPrivateTargets: boolean;
  /** The clock deliveries are scheduled by; tests move it. Signatures always carry the real time. */
  now?: () => Date;
  /** LISTEN on the database (listenerOf): a committed change starts a pass within `settleMs`. */
  listen?: Listen;
  /** How often every endpoint is looked at when nothing was notified: the fallback for missed notices. */
  pollMs?: number;
  /** How long after a notice its pass starts: the commits of a burst share one pass. */
  settleMs?: number;
  /** How long a claimed event is held: past it, another instance may attempt it again. */
  leaseMs?: number;
  /** A receiver's time per attempt. */
  timeoutMs?: number;
  /** Events of one endpoint attempted at once by this instance. */
  concurrency?: number;
  /** The most attempts this instance starts per second, over all endpoints. */
  perSecond?: number;
  /** The pace itself (tests give one with their own clock); made from `perSecond` otherwise. */
  pace?: DeliveryPace;
  /** This instance's name on the leases it takes. */
  owner?: string;
  /** Counts each attempt made; the process's attempts metric by default. */
  countAttempt?: (outcome: AttemptCount) => void;
};

/**
 * Pages of the change record one endpoint reads per brand per pass: the rest is read by the next pass. A
 * page's events are made in one go on the event loop, so pages are small and calls run between them.
 */
const PAGES_PER_PASS = 40;
const PAGE = 25;
/** The settings' own defaults (server/config.ts), for a worker not given them. */
const DEFAULTS = parseConfig({});
/** A notice's pass waits this long for the rest of a burst. */
const SETTLE_MS = 20;
/** The first look again at a notified change the feed's horizon still held back. */
const HELD_BACK_MS = 25;
const HELD_BACK_MAX_MS = 1_000;
/** With notices, the poll only covers missed ones (and endpoints of a partner activated again). */
const FALLBACK_POLL_MS = 15_000;

export class WebhookWorker {
  private readonly running = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly owner: string;
  private readonly pace: DeliveryPace;
  private readonly connections = new ReceiverConnections();
  private schedule: WakeSchedule | undefined;
  /** The latest transaction notified, and the latest known to be below the feed's horizon (read). */
  private notifiedXid = 0;
  private seenXid = 0;
  /** Set at start and whenever the listen took effect again: what committed meanwhile was never notified. */
  private catchUp = true;
  /** How long until the next look while notified changes are held back by an older open transaction. */
  private heldBackMs = 0;
  private cursorKey: Buffer | undefined;
  private lagSeconds = 0;
  private disabled = 0;

  constructor(private readonly options: WorkerOptions) {
    this.owner = options.owner ?? randomUUID();
    this.pace = options.pace ?? new DeliveryPace(options.perSecond ?? DEFAULTS.WEBHOOK_DELIVERIES_PER_SECOND);
  }

  /** The age of the oldest undelivered event of any active endpoint (the metric; no partner label). */
  largestLagSeconds(): number {
    return this.lagSeconds;
  }

  disabledEndpoints(): number {
    return this.disabled;
  }

  /** Runs passes from now on; resolves once changes are listened for (see WakeSchedule.start). */
  start(): Promise<void> {
    this.schedule ??= new WakeSchedule(
      () => this.runOnce(),
      (payload) => {
        const xid = Number(payload);
        if (Number.isSafeInteger(xid)) this.notifiedXid = Math.max(this.notifiedXid, xid);
      },
      () => {
        this.catchUp = true;
      },
      {
        listen: this.options.listen,
        settleMs: this.options.settleMs ?? SETTLE_MS,
        pollMs: this.options.pollMs ?? (this.options.listen ? FALLBACK_POLL_MS : 1_000),
        log: this.options.log,
      },
    );
    // The name on this instance's leases: an operator reading webhook_deliveries can tell whose a lease is;
    // and the thread delivering (0: the one that answers calls).
    this.options.log.info({ owner: this.owner, thread: threadId }, 'webhook delivery started');
    return this.schedule.start();
  }

  /** Stops claiming, cuts attempts under way short and gives their events back; resolves once all ended. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.schedule?.stop();
    await Promise.all(this.running.values());
    this.connections.close();
  }

  /** One pass over every endpoint: new events read, due ones attempted until none is due. Never throws. */
  async runOnce(): Promise<void> {
    const { db, log } = this.options;
    try {
      // The feed shows a notified change only once every older transaction ended (its horizon). Changes
      // committed before the listen took effect are awaited like notified ones.
      if (this.catchUp) {
        this.notifiedXid = Math.max(this.notifiedXid, await latestTransaction(db));
        this.catchUp = false;
      }
      const awaited = this.notifiedXid;
      const horizon = awaited > this.seenXid ? await feedHorizon(db) : Number.POSITIVE_INFINITY;
      this.cursorKey ??= await loadFeedCursorKey(db);
      await dropMovedBrands(db);
      const rows = await listEndpoints(db);
      this.disabled = rows.filter((row) => row.endpoint.status === 'DISABLED').length;
      // A deactivated partner's endpoints pause: nothing is read or sent until it is activated.
      const active = rows.filter((row) => row.endpoint.status === 'ACTIVE' && row.partnerActive);
      const started: Promise<void>[] = [];
      for (const { endpoint } of active) {
        if (this.stopping.signal.aborted) break;
        if (this.running.has(endpoint.id)) continue;
        const run = this.runEndpoint(endpoint).finally(() => this.running.delete(endpoint.id));
        this.running.set(endpoint.id, run);
        started.push(run);
      }
      await Promise.all(started);
      await this.measureLag(new Set(active.map((row) => row.endpoint.id)));
      if (horizon > awaited) {
        this.seenXid = awaited;
        this.heldBackMs = 0;
      } else {
        // Read again shortly, less often while the older transaction stays open (any database's on the
        // server holds the horizon), but never waiting as long as the poll.
        this.heldBackMs = Math.min(HELD_BACK_MAX_MS, Math.max(HELD_BACK_MS, this.heldBackMs * 2));
        this.schedule?.within(this.heldBackMs);
      }
      const due = await nextDueAt(db);
      // At least a second between passes for retries: an event due now that this pass could not claim
      // (another instance's lease, say) must not spin the loop.
      if (due) this.schedule?.within(Math.max(1_000, due.getTime() - this.now().getTime()));
    } catch (error) {
      log.error({ error }, 'webhook delivery pass failed');
    }
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private leaseMs(): number {
    return this.options.leaseMs ?? DEFAULTS.WEBHOOK_LEASE_MS;
  }

  private async runEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    try {
      await this.readFeed(endpoint);
      for (;;) {
        if (this.stopping.signal.aborted) return;
        const now = this.now();
        const claimed = await claimDeliveries(this.options.db, {
          endpointId: endpoint.id,
          partnerId: endpoint.partnerId,
          owner: this.owner,
          now,
          until: new Date(now.getTime() + this.leaseMs()),
          limit: this.options.concurrency ?? 8,
        });
        if (claimed.length === 0) return;
        const ids = claimed.map((delivery) => delivery.id);
        const waited = await this.pace.take(claimed.length, this.stopping.signal);
        if (this.stopping.signal.aborted) {
          await releaseDeliveries(this.options.db, this.owner, ids);
          return;
        }
        // A long wait for the pace used up part of the leases: renewed, and only those still this
        // instance's are attempted (one that ran out may be another's by now).
        const held =
          waited > this.leaseMs() / 4
            ? await renewLeases(this.options.db, this.owner, ids, new Date(this.now().getTime() + this.leaseMs()))
            : new Set(ids);
        const batch = claimed.filter((delivery) => held.has(delivery.id));
        // The secrets are opened once a batch, not once an attempt; the outcomes are recorded together.
        const secrets = this.secretsOf(endpoint);
        const attempts = await Promise.all(batch.map((delivery) => this.attempt(endpoint, delivery, secrets)));
        const disabled = await this.record(endpoint, attempts);
        // Calls waiting on the event loop go before the next batch.
        await yieldToCalls();
        if (disabled) return;
      }
    } catch (error) {
      this.options.log.error({ webhook: endpoint.id, error }, 'webhook delivery failed');
    }
  }

  /** Turns what each brand's change record holds after the endpoint's position into events. */
  private async readFeed(endpoint: WebhookEndpoint): Promise<void> {
    const { db } = this.options;
    const stored = await positionsOf(db, endpoint.id);
    for (const brand of await brandsOfEndpoint(db, endpoint)) {
      let from = stored.get(brand.id);
      for (let page = 0; !this.stopping.signal.aborted; page++) {
        const moved = await this.readPage(endpoint, brand, from);
        if (!moved) break;
        await yieldToCalls();
        if (page + 1 === PAGES_PER_PASS) {
          // More is recorded than a pass reads: the next pass follows this one at once.
          this.schedule?.wake();
          break;
        }
        from = moved;
      }
    }
  }

  /** One page: its events recorded and the position moved past them; undefined when there is no more now. */
  private async readPage(
    endpoint: WebhookEndpoint,
    brand: BrandScope,
    from: ChangesPosition | undefined,
  ): Promise<ChangesPosition | undefined> {
    const { db } = this.options;
    const key = this.cursorKey as Buffer;
    const now = this.now();
    // A brand the endpoint has not read yet (added to the partner later) is read from its first change.
    const start = from ?? (await startOf(db, brand));
    if (!start) return undefined;
    const page = await readRecordedChanges(db, brand, start, PAGE);
    if (page === undefined || page === 'behind') return undefined;
    if (page === 'expired') {
      // The feed cannot continue from here (its 410): one feed.expired, then on from the brand's current position.
      const current = await currentChangesPosition(db, brand);
      if (!current) return undefined;
      await recordEvents(db, { endpointId: endpoint.id, brandId: brand.id, from, to: current }, [
        feedExpiredEvent(endpoint, brand, now),
      ]);
      return undefined;
    }
    if (page.items.length === 0 && from) return undefined;
    const events = reviewEvents(endpoint, brand, page.items, key, now);
    const recorded = await recordEvents(
      db,
      { endpointId: endpoint.id, brandId: brand.id, from, to: page.next },
      events,
    );
    return recorded && page.hasNext ? page.next : undefined;
  }

  /**
   * One attempt, not yet recorded, and why it stops the endpoint once recorded (a receiver's 410, or the
   * schedule run out); undefined when the drain cut it short and the event went back.
   */
  private async attempt(
    endpoint: WebhookEndpoint,
    delivery: ClaimedDelivery,
    secrets: string[],
  ): Promise<{ record: AttemptRecord; stops?: string } | undefined> {
    const attempt = delivery.attempts + 1;
    const outcome = await this.send(endpoint, delivery, secrets);
    if (this.stopping.signal.aborted && outcome.error !== null) {
      // Cut short by the drain: the event goes back, to be sent again (same webhook-id) by whoever is running.
      await releaseDeliveries(this.options.db, this.owner, [delivery.id]);
      return undefined;
    }
    const attemptedAt = this.now();
    const delivered = outcome.error === null;
    const stops =
      outcome.statusCode === 410
        ? 'the receiver answered 410 Gone'
        : !delivered && attempt >= RETRY_SCHEDULE_MS.length
          ? `no attempt succeeded in ${RETRY_SCHEDULE_MS.length} tries over about 3 days`
          : undefined;
    const wait = Math.max(RETRY_SCHEDULE_MS[attempt] ?? 0, outcome.retryAfterMs ?? 0);
    const nextAttemptAt = delivered || stops ? null : new Date(attemptedAt.getTime() + wait);
    const count = this.options.countAttempt ?? ((counted) => metrics?.webhookDeliveries.inc({ outcome: counted }));
    count(delivered ? 'delivered' : outcome.statusCode ? 'rejected' : 'failed');
    const record = {
      id: delivery.id,
      endpointId: endpoint.id,
      attempt,
      ...outcome,
      attemptedAt,
      nextAttemptAt,
      delivered,
    };
    return { record, stops };
  }

  /**
   * Records a batch's attempts; true when a recorded one stopped the endpoint, which then keeps its
   * position and events.
   */
  private async record(
    endpoint: WebhookEndpoint,
    attempts: ({ record: AttemptRecord; stops?: string } | undefined)[],
  ): Promise<boolean> {
    const { db, log } = this.options;
    const made = attempts.filter((attempt) => attempt !== undefined);
    const recorded = await recordAttempts(
      db,
      this.owner,
      made.map((attempt) => attempt.record),
    );
    const reason = made.find((attempt) => attempt.stops && recorded.has(attempt.record.id))?.stops;
    if (!reason) return false;
    await setEndpointStatus(db, endpoint.id, 'DISABLED', reason);
    log.warn({ webhook: endpoint.id, reason }, 'webhook endpoint disabled');
    return true;
  }

  /** The secrets that sign the endpoint's attempts now: both during a rotation's overlap. */
  private secretsOf(endpoint: WebhookEndpoint): string[] {
    return secretsInUse(this.options.secretsKey, endpoint, this.now());
  }

  /** One signed POST, or the refusal of its target; never throws. */
  private async send(endpoint: WebhookEndpoint, delivery: ClaimedDelivery, secrets: string[]): Promise<AttemptOutcome> {
    const { allowPrivateTargets } = this.options;
    const started = performance.now();
    const checked = await checkTarget(endpoint.url, allowPrivateTargets);
    if ('refused' in checked)
      return {
        statusCode: null,
        error: `target refused: ${checked.refused}`,
        durationMs: Math.round(performance.now() - started),
        retryAfterMs: undefined,
      };
    const headers = signedHeaders(delivery.id, delivery.body, secrets, new Date());
    return postDelivery(checked.target, headers, delivery.body, {
      timeoutMs: this.options.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
      signal: this.stopping.signal,
      agent: this.connections.agentFor(checked.target),
    });
  }

  private async measureLag(active: Set<string>): Promise<void> {
    const now = this.now().getTime();
    let largest = 0;
    for (const { endpointId, since } of await oldestPending(this.options.db)) {
      if (active.has(endpointId) && since) largest = Math.max(largest, (now - since.getTime()) / 1000);
    }
    this.lagSeconds = largest;
  }
}

/** The start of a brand's change record in its current history and epoch. */
async function startOf(db: Db, brand: BrandScope): Promise<ChangesPosition | undefined> {
  const current = await currentChangesPosition(db, brand);
  return current && { ...current, xid: 0, seq: 0 };
}
