import { type AnyColumn, and, asc, eq, exists, inArray, isNotNull, isNull, lt, lte, min, or, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from '../client';
import {
  brands,
  deliveryIs,
  partners,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
  webhookPositions,
} from '../schema';
import { preparedOnce } from './prepared';
import type { ChangesPosition } from './review-changes';
import { positionMove, positionMoveValues } from './webhooks';

// The events of webhook endpoints and their attempts (D-28). A worker holds an event through a lease (an
// owner and an expiry on its row), never through a transaction: no transaction spans an HTTP attempt.

export type NewDelivery = Pick<
  typeof webhookDeliveries.$inferInsert,
  'id' | 'endpointId' | 'brandId' | 'reviewCode' | 'type' | 'body'
>;

export async function insertDeliveries(db: Db, deliveries: NewDelivery[]) {
  if (deliveries.length > 0) await db.insert(webhookDeliveries).values(deliveries);
}

/**
 * An event inserted already claimed by `owner` until `until`: no worker attempts it while its maker does
 * (the operator's `webhooks test`, which attempts it at once and waits for the answer).
 */
export async function insertClaimedDelivery(db: Db, delivery: NewDelivery, lease: { owner: string; until: Date }) {
  await db.insert(webhookDeliveries).values({ ...delivery, leaseOwner: lease.owner, leaseUntil: lease.until });
}

/** The columns of an event that its maker sets; the rest take their defaults. */
const newDeliveryColumns = {
  id: webhookDeliveries.id,
  endpointId: webhookDeliveries.endpointId,
  brandId: webhookDeliveries.brandId,
  reviewCode: webhookDeliveries.reviewCode,
  type: webhookDeliveries.type,
  body: webhookDeliveries.body,
} satisfies Record<keyof NewDelivery, AnyColumn>;

/**
 * Rows bound as one JSON value, which jsonb_populate_recordset reads as rows of the columns' table: each
 * value under its column's own name. A batch of any size is then one statement of one shape.
 */
function jsonRows<Columns extends Record<string, AnyColumn>>(
  columns: Columns,
  rows: Partial<Record<keyof Columns, unknown>>[],
): string {
  return JSON.stringify(
    rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [columns[key]?.name, value]))),
  );
}

/** The columns' names, as an INSERT lists them and a SELECT of the rows read from jsonRows picks them. */
const columnList = (columns: Record<string, AnyColumn>) =>
  sql.join(
    Object.values(columns).map((column) => sql.identifier(column.name)),
    sql`, `,
  );

/**
 * The events read from a brand's position, and the position moved past them, in one statement: false (and
 * nothing written) when another instance moved the position first.
 */
export async function recordEvents(
  db: Db,
  move: { endpointId: string; brandId: number; from: ChangesPosition | undefined; to: ChangesPosition },
  deliveries: NewDelivery[],
): Promise<boolean> {
  const first = move.from === undefined;
  const statement = preparedOnce(db, `webhook_events${first ? ' first' : ''}`, () => eventsStatement(db, first));
  const [row] = await statement.execute({
    ...positionMoveValues(move.endpointId, move.brandId, move.from, move.to),
    events: jsonRows(newDeliveryColumns, deliveries),
  });
  return (row?.moved ?? 0) > 0;
}

function eventsStatement(db: Db, first: boolean) {
  const moved = db.$with('moved').as(positionMove(db, first));
  const columns = columnList(newDeliveryColumns);
  // Runs whether or not anything reads it; inserts only when the position moved.
  const inserted = db.$with('inserted', {}).as(
    sql`INSERT INTO ${webhookDeliveries} (${columns}) SELECT ${columns}
      FROM jsonb_populate_recordset(NULL::${webhookDeliveries}, ${sql.placeholder('events')}::jsonb)
      WHERE EXISTS (SELECT FROM ${moved})`,
  );
  return db.with(moved, inserted).select({ moved: sql<number>`count(*)::int` }).from(moved);
}

export type ClaimedDelivery = Pick<
  typeof webhookDeliveries.$inferSelect,
  'id' | 'endpointId' | 'brandId' | 'reviewCode' | 'type' | 'body' | 'attempts'
>;

/**
 * Whether the outer query's row is the first pending event of its review to its endpoint: a later one waits
 * (D-28: two events of one review are never in flight to one endpoint at once, and they arrive in order).
 * An event of no review (a test, a feed.expired) waits for none. A scalar subquery, looked up per row with
 * webhook_deliveries_pending_review_idx: PostgreSQL never turns it into a join, whose plan, made from the
 * statistics of a queue that churns, could scan every pending event of the endpoint for each row.
 */
function firstPendingOfReview(db: Db) {
  const d = webhookDeliveries;
  const same = alias(webhookDeliveries, 'same');
  const first = db
    .select({ seq: min(same.seq) })
    .from(same)
    .where(
      and(
        eq(same.endpointId, d.endpointId),
        deliveryIs('PENDING', same.status),
        eq(same.reviewCode, d.reviewCode),
        eq(same.brandId, d.brandId),
      ),
    );
  return or(isNull(d.reviewCode), sql`${d.seq} = (${first})`);
}

/**
 * Claims up to `limit` due events of the endpoint for `owner` until `until`, in one short statement: an
 * event is due when its time has come, no live lease holds it, and no earlier event of the same review is
 * still pending (so two events of one review are never in flight at once, and arrive in order). Events of
 * a brand no longer the endpoint's partner's are not delivered. SKIP LOCKED lets instances claim side by
 * side; the lease, not a lock, holds the event while it is attempted.
 */
export async function claimDeliveries(
  db: Db,
  claim: { endpointId: string; partnerId: number; owner: string; now: Date; until: Date; limit: number },
): Promise<ClaimedDelivery[]> {
  // Every claim has one shape: built and prepared once, then only bound (instants as ISO text, as the
  // driver takes a placeholder's value).
  const claimed = await preparedOnce(db, 'webhook_claim', () => claimStatement(db)).execute({
    ...claim,
    now: claim.now.toISOString(),
    until: claim.until.toISOString(),
  });
  // RETURNING keeps no order: the events go out in the order they were made.
  return claimed.sort((a, b) => a.seq - b.seq).map(({ seq: _, ...row }) => row);
}

function claimStatement(db: Db) {
  const c = webhookDeliveries;
  const now = sql.placeholder('now');
  const brandOfPartner = db
    .select({ one: sql`1` })
    .from(brands)
    .where(and(eq(brands.id, c.brandId), eq(brands.partnerId, sql.placeholder('partnerId'))));
  const due = db
    .select({ id: c.id })
    .from(c)
    .where(
      and(
        eq(c.endpointId, sql.placeholder('endpointId')),
        deliveryIs('PENDING', c.status),
        lte(c.nextAttemptAt, now),
        or(isNull(c.leaseUntil), lt(c.leaseUntil, now)),
        firstPendingOfReview(db),
        or(isNull(c.brandId), exists(brandOfPartner)),
      ),
    )
    .orderBy(asc(c.seq))
    .limit(sql.placeholder('limit'))
    .for('update', { skipLocked: true });
  return db
    .update(c)
    .set({ leaseOwner: sql`${sql.placeholder('owner')}`, leaseUntil: sql`${sql.placeholder('until')}` })
    .where(inArray(c.id, due))
    .returning({
      id: c.id,
      endpointId: c.endpointId,
      brandId: c.brandId,
      reviewCode: c.reviewCode,
      type: c.type,
      body: c.body,
      attempts: c.attempts,
      seq: c.seq,
    });
}

export type Outcome = {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
  /** When to try again; null once delivered or given up. */
  nextAttemptAt: Date | null;
  delivered: boolean;
};

/** An attempt to record: which event, its number, and how it went. */
export type AttemptRecord = { id: string; endpointId: string; attempt: number } & Outcome;

/**
 * Records a batch of attempts in one statement, each if its lease is still `owner`'s: the attempt kept, and
 * the event delivered or due again at its `nextAttemptAt`. Returns the ids recorded; an event another
 * instance holds now is left to it (its own attempt will count). The batch travels as one JSON value,
 * whatever its size: the statement has one shape, prepared once.
 */
export async function recordAttempts(db: Db, owner: string, records: AttemptRecord[]): Promise<Set<string>> {
  if (records.length === 0) return new Set();
  const attempts = records.map((record) => ({
    deliveryId: record.id,
    endpointId: record.endpointId,
    attempt: record.attempt,
    statusCode: record.statusCode,
    error: record.error,
    durationMs: record.durationMs,
    attemptedAt: record.attemptedAt.toISOString(),
    nextAttemptAt: record.nextAttemptAt?.toISOString() ?? null,
  })) satisfies Record<keyof typeof attemptColumns, unknown>[];
  const delivered = records.filter((record) => record.delivered).map((record) => record.id);
  const recorded = await preparedOnce(db, 'webhook_record', () => recordStatement(db)).execute({
    owner,
    attempts: jsonRows(attemptColumns, attempts),
    delivered: JSON.stringify(delivered),
  });
  return new Set(recorded.map((row) => row.id));
}

/** The columns of an attempt that the batch's JSON value carries. */
const attemptColumns = {
  deliveryId: webhookAttempts.deliveryId,
  endpointId: webhookAttempts.endpointId,
  attempt: webhookAttempts.attempt,
  statusCode: webhookAttempts.statusCode,
  error: webhookAttempts.error,
  durationMs: webhookAttempts.durationMs,
  attemptedAt: webhookAttempts.attemptedAt,
  nextAttemptAt: webhookAttempts.nextAttemptAt,
};

function recordStatement(db: Db) {
  const d = webhookDeliveries;
  const a = webhookAttempts;
  // The batch's attempts, read from the JSON value as rows of webhook_attempts.
  const made = db
    .$with('made', attemptColumns)
    .as(sql`SELECT * FROM jsonb_populate_recordset(NULL::${a}, ${sql.placeholder('attempts')}::jsonb)`);
  // The events still leased to the owner, locked until the statement ends: both the attempts kept and the
  // events moved on are of these. Looked up by id as an array, so the plan is the primary key's whatever the
  // statistics (as a join with the batch, a never-analysed queue gets a scan of every event).
  const held = db.$with('held').as(
    db
      .select({ id: d.id })
      .from(d)
      .where(
        and(
          sql`${d.id} = ANY(ARRAY(SELECT ${made.deliveryId} FROM ${made}))`,
          eq(d.leaseOwner, sql.placeholder('owner')),
        ),
      )
      .for('update'),
  );
  const columns = columnList(attemptColumns);
  const attempted = db
    .$with('attempted', {})
    .as(
      sql`INSERT INTO ${a} (${columns}) SELECT ${columns} FROM ${made} WHERE ${made.deliveryId} IN (SELECT ${held.id} FROM ${held})`,
    );
  const wasDelivered = sql`${made.deliveryId} IN (SELECT jsonb_array_elements_text(${sql.placeholder('delivered')}::jsonb))`;
  return db
    .with(made, held, attempted)
    .update(d)
    .set({
      attempts: sql`${made.attempt}`,
      leaseOwner: null,
      leaseUntil: null,
      status: sql`CASE WHEN ${wasDelivered} THEN 'DELIVERED' ELSE ${d.status} END`,
      deliveredAt: sql`CASE WHEN ${wasDelivered} THEN ${made.attemptedAt} ELSE ${d.deliveredAt} END`,
      // Null once delivered or given up: the event keeps the time it had.
      nextAttemptAt: sql`coalesce(${made.nextAttemptAt}, ${d.nextAttemptAt})`,
    })
    .from(made)
    .where(and(eq(d.id, made.deliveryId), inArray(d.id, db.select({ id: held.id }).from(held))))
    .returning({ id: d.id });
}

/** Gives claimed events back at once (an instance draining): another instance may take them without waiting. */
export async function releaseDeliveries(db: Db, owner: string, ids: string[]) {
  if (ids.length === 0) return;
  await db
    .update(webhookDeliveries)
    .set({ leaseOwner: null, leaseUntil: null })
    .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.leaseOwner, owner)));
}

/** Extends `owner`'s leases on `ids` to `until`: the ids it still held (a lease that ran out may be another's). */
export async function renewLeases(db: Db, owner: string, ids: string[], until: Date): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const held = await db
    .update(webhookDeliveries)
    .set({ leaseUntil: until })
    .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.leaseOwner, owner)))
    .returning({ id: webhookDeliveries.id });
  return new Set(held.map((row) => row.id));
}

/** Per endpoint, when its oldest pending event was made. */
export function oldestPending(db: Db) {
  return db
    .select({ endpointId: webhookDeliveries.endpointId, since: min(webhookDeliveries.createdAt) })
    .from(webhookDeliveries)
    .where(deliveryIs('PENDING', webhookDeliveries.status))
    .groupBy(webhookDeliveries.endpointId);
}

/**
 * When the next event of an active endpoint comes due (a retry's time, or a lease that runs out), among
 * those no earlier event of their review holds back; undefined when none is pending.
 */
export async function nextDueAt(db: Db): Promise<Date | undefined> {
  const d = webhookDeliveries;
  const [row] = await db
    .select({
      at: sql<Date | null>`min(greatest(${d.nextAttemptAt}, coalesce(${d.leaseUntil}, ${d.nextAttemptAt})))`.mapWith(
        d.nextAttemptAt,
      ),
    })
    .from(d)
    .innerJoin(webhookEndpoints, and(eq(webhookEndpoints.id, d.endpointId), eq(webhookEndpoints.status, 'ACTIVE')))
    .innerJoin(partners, and(eq(partners.id, webhookEndpoints.partnerId), eq(partners.isActive, true)))
    .where(and(deliveryIs('PENDING', d.status), firstPendingOfReview(db)));
  return row?.at ?? undefined;
}

/** Removes attempts older than `before`, and events delivered before it (the daily job, D-28). */
export async function pruneWebhookAttempts(db: Db, before: Date): Promise<number> {
  const removed = await db
    .delete(webhookAttempts)
    .where(lt(webhookAttempts.attemptedAt, before))
    .returning({ id: webhookAttempts.id });
  await db
    .delete(webhookDeliveries)
    .where(and(deliveryIs('DELIVERED', webhookDeliveries.status), lt(webhookDeliveries.deliveredAt, before)));
  return removed.length;
}

/**
 * Forgets what endpoints hold of brands their partner no longer has (a brand moved to another partner):
 * the pending events are not sent, and the positions go, so nothing of the brand reaches the old partner.
 */
export async function dropMovedBrands(db: Db): Promise<number> {
  const notThePartners = (
    brandId: typeof webhookDeliveries.brandId | typeof webhookPositions.brandId,
    endpointId: typeof webhookDeliveries.endpointId | typeof webhookPositions.endpointId,
  ) =>
    sql`NOT EXISTS (SELECT 1 FROM ${brands} JOIN ${webhookEndpoints} ON ${webhookEndpoints.partnerId} = ${brands.partnerId}
      WHERE ${brands.id} = ${brandId} AND ${webhookEndpoints.id} = ${endpointId})`;
  const dropped = await db
    .delete(webhookDeliveries)
    .where(
      and(
        deliveryIs('PENDING', webhookDeliveries.status),
        isNotNull(webhookDeliveries.brandId),
        notThePartners(webhookDeliveries.brandId, webhookDeliveries.endpointId),
      ),
    )
    .returning({ id: webhookDeliveries.id });
  await db.delete(webhookPositions).where(notThePartners(webhookPositions.brandId, webhookPositions.endpointId));
  return dropped.length;
}
