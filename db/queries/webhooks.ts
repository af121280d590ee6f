import { and, asc, desc, eq, gt, inArray, min, sql } from 'drizzle-orm';
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
import type { BrandScope } from './brands';
import { literalLimit } from './pagination';
import type { ChangesPosition } from './review-changes';

// A partner's webhook endpoints (D-28), as the operator's CLI and the delivery worker see them. The secrets
// stay sealed here: only the layer holding WEBHOOK_SECRETS_KEY opens them.

export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;
export type NewWebhookEndpoint = Pick<
  typeof webhookEndpoints.$inferInsert,
  'id' | 'partnerId' | 'url' | 'brandIds' | 'criticalOnly' | 'secret'
>;
export type BrandPosition = { brandId: number; position: ChangesPosition };

/** The partner's brands, by code when `codes` is given (a code of another partner is simply not found). */
export function brandsOfPartner(db: Db, partnerId: number, codes?: string[]): Promise<BrandScope[]> {
  return db
    .select({ id: brands.id, brandCode: brands.brandCode })
    .from(brands)
    .where(and(eq(brands.partnerId, partnerId), codes ? inArray(brands.brandCode, codes) : undefined))
    .orderBy(asc(brands.createdAt), asc(brands.brandCode));
}

/** The brands an endpoint covers now: its own list, or every brand of its partner; a brand moved away drops out. */
export function brandsOfEndpoint(db: Db, endpoint: Pick<WebhookEndpoint, 'partnerId' | 'brandIds'>) {
  return db
    .select({ id: brands.id, brandCode: brands.brandCode })
    .from(brands)
    .where(
      and(
        eq(brands.partnerId, endpoint.partnerId),
        endpoint.brandIds ? inArray(brands.id, endpoint.brandIds) : undefined,
      ),
    )
    .orderBy(asc(brands.createdAt), asc(brands.brandCode));
}

export async function insertEndpoint(db: Db, endpoint: NewWebhookEndpoint, positions: BrandPosition[]) {
  await db.transaction(async (tx) => {
    await tx.insert(webhookEndpoints).values(endpoint);
    await storePositions(tx, endpoint.id, positions);
  });
}

export async function findEndpoint(db: Db, id: string): Promise<WebhookEndpoint | undefined> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  return row;
}

/** Every endpoint with its partner's name and state, for the CLI and the worker. */
export function listEndpoints(db: Db) {
  return db
    .select({ endpoint: webhookEndpoints, partner: partners.name, partnerActive: partners.isActive })
    .from(webhookEndpoints)
    .innerJoin(partners, eq(partners.id, webhookEndpoints.partnerId))
    .orderBy(asc(partners.name), asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

export async function brandCodesOf(db: Db, brandIds: number[]): Promise<Map<number, string>> {
  if (brandIds.length === 0) return new Map();
  const rows = await db
    .select({ id: brands.id, code: brands.brandCode })
    .from(brands)
    .where(inArray(brands.id, brandIds));
  return new Map(rows.map((row) => [row.id, row.code]));
}

export async function setEndpointStatus(
  db: Db,
  id: string,
  status: WebhookEndpoint['status'],
  reason: string | null,
): Promise<boolean> {
  const rows = await db
    .update(webhookEndpoints)
    .set({ status, disabledReason: reason })
    .where(eq(webhookEndpoints.id, id))
    .returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

/** A new secret; the one it replaces keeps signing beside it until `previousUntil`. */
export async function rotateEndpointSecret(db: Db, id: string, secret: string, previous: string, previousUntil: Date) {
  await db
    .update(webhookEndpoints)
    .set({ secret, previousSecret: previous, previousSecretUntil: previousUntil })
    .where(eq(webhookEndpoints.id, id));
}

export type SealedSecrets = Pick<WebhookEndpoint, 'id' | 'secret' | 'previousSecret'>;

/**
 * Rewrites every endpoint's sealed secrets with what `reseal` returns for them, in one transaction with the
 * rows locked: all are rewritten or none (a throw from `reseal` rolls everything back). The count rewritten.
 */
export async function resealEndpointSecrets(
  db: Db,
  reseal: (row: SealedSecrets) => Omit<SealedSecrets, 'id'> | undefined,
): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await tx
      .select({
        id: webhookEndpoints.id,
        secret: webhookEndpoints.secret,
        previousSecret: webhookEndpoints.previousSecret,
      })
      .from(webhookEndpoints)
      .orderBy(asc(webhookEndpoints.id))
      .for('update');
    let rewritten = 0;
    for (const row of rows) {
      const sealed = reseal(row);
      if (!sealed) continue;
      await tx.update(webhookEndpoints).set(sealed).where(eq(webhookEndpoints.id, row.id));
      rewritten++;
    }
    return rewritten;
  });
}

/** The endpoint's stored position in each brand it has read. */
export async function positionsOf(db: Db, endpointId: string): Promise<Map<number, ChangesPosition>> {
  const rows = await db.select().from(webhookPositions).where(eq(webhookPositions.endpointId, endpointId));
  return new Map(
    rows.map((row) => [
      row.brandId,
      { kind: 'changes', history: row.history, epoch: row.epoch, xid: row.xid, seq: row.seq } as const,
    ]),
  );
}

/** Sets positions, replacing any stored for the same brands. */
export async function storePositions(db: Db, endpointId: string, positions: BrandPosition[]) {
  if (positions.length === 0) return;
  await db
    .insert(webhookPositions)
    .values(positions.map(({ brandId, position }) => ({ endpointId, brandId, ...columnsOf(position) })))
    .onConflictDoUpdate({
      target: [webhookPositions.endpointId, webhookPositions.brandId],
      set: {
        history: sql`excluded.history`,
        epoch: sql`excluded.epoch`,
        xid: sql`excluded.xid`,
        seq: sql`excluded.seq`,
      },
    });
}

/**
 * The statement that moves a position to the one bound as `to…` if it is still the one bound as `from…`
 * (another instance may have moved it first), returning the row it moved; `first` when the endpoint has
 * no position in the brand yet, which it creates unless another instance has.
 */
export function positionMove(db: Db, first: boolean) {
  const p = webhookPositions;
  const bound = (name: string) => sql`${sql.placeholder(name)}`;
  const to = { history: bound('toHistory'), epoch: bound('toEpoch'), xid: bound('toXid'), seq: bound('toSeq') };
  const endpointId = bound('endpointId');
  const brandId = bound('brandId');
  if (first)
    return db
      .insert(p)
      .values({ endpointId, brandId, ...to })
      .onConflictDoNothing()
      .returning({ brandId: p.brandId });
  return db
    .update(p)
    .set(to)
    .where(
      and(
        eq(p.endpointId, endpointId),
        eq(p.brandId, brandId),
        eq(p.history, bound('fromHistory')),
        eq(p.epoch, bound('fromEpoch')),
        eq(p.xid, bound('fromXid')),
        eq(p.seq, bound('fromSeq')),
      ),
    )
    .returning({ brandId: p.brandId });
}

/** The values `positionMove` binds: where the position was (if anywhere) and where it goes. */
export function positionMoveValues(
  endpointId: string,
  brandId: number,
  from: ChangesPosition | undefined,
  to: ChangesPosition,
) {
  const moving = { endpointId, brandId, toHistory: to.history, toEpoch: to.epoch, toXid: to.xid, toSeq: to.seq };
  if (!from) return moving;
  return { ...moving, fromHistory: from.history, fromEpoch: from.epoch, fromXid: from.xid, fromSeq: from.seq };
}

const columnsOf = ({ history, epoch, xid, seq }: ChangesPosition) => ({ history, epoch, xid, seq });

/** Active again; its pending events are due now, on a fresh retry schedule. */
export async function resumeEndpoint(db: Db, id: string) {
  await db.transaction(async (tx) => {
    await tx
      .update(webhookEndpoints)
      .set({ status: 'ACTIVE', disabledReason: null })
      .where(eq(webhookEndpoints.id, id));
    await tx
      .update(webhookDeliveries)
      .set({ attempts: 0, nextAttemptAt: sql`now()` })
      .where(and(eq(webhookDeliveries.endpointId, id), deliveryIs('PENDING', webhookDeliveries.status)));
  });
}

// The partner's view of its endpoints (D-28): its own only, a foreign id answering like a missing one.

/** The partner's endpoints, oldest first, with how their deliveries stand. */
export async function partnerEndpoints(db: Db, partnerId: number, window: { limit: number; offset: number }) {
  const e = webhookEndpoints;
  const rows = await db
    .select({
      id: e.id,
      url: e.url,
      brandIds: e.brandIds,
      criticalOnly: e.criticalOnly,
      status: e.status,
      disabledReason: e.disabledReason,
    })
    .from(e)
    .where(eq(e.partnerId, partnerId))
    .orderBy(asc(e.createdAt), asc(e.id))
    .limit(window.limit)
    .offset(window.offset);
  if (rows.length === 0) return [];
  const d = webhookDeliveries;
  const pending = deliveryIs('PENDING', d.status);
  const stats = await db
    .select({
      endpointId: d.endpointId,
      lastSuccessAt:
        sql<Date | null>`max(${d.deliveredAt}) FILTER (WHERE ${deliveryIs('DELIVERED', d.status)})`.mapWith(
          d.deliveredAt,
        ),
      nextAttemptAt: sql<Date | null>`min(${d.nextAttemptAt}) FILTER (WHERE ${pending})`.mapWith(d.nextAttemptAt),
      oldestPendingAt: sql<Date | null>`min(${d.createdAt}) FILTER (WHERE ${pending})`.mapWith(d.createdAt),
    })
    .from(d)
    .where(
      inArray(
        d.endpointId,
        rows.map((row) => row.id),
      ),
    )
    .groupBy(d.endpointId);
  const statsOf = new Map(stats.map((row) => [row.endpointId, row]));
  return Promise.all(
    rows.map(async (row) => {
      const { lastSuccessAt = null, nextAttemptAt = null, oldestPendingAt = null } = statsOf.get(row.id) ?? {};
      return {
        ...row,
        lastSuccessAt,
        nextAttemptAt,
        oldestPendingAt,
        failingSince: await failingSince(db, row.id, lastSuccessAt),
      };
    }),
  );
}

/** The first failed attempt since the last success: how long the endpoint has been failing. */
async function failingSince(db: Db, endpointId: string, lastSuccessAt: Date | null): Promise<Date | null> {
  const a = webhookAttempts;
  const [row] = await db
    .select({ at: min(a.attemptedAt) })
    .from(a)
    .where(
      and(
        eq(a.endpointId, endpointId),
        sql`(${a.statusCode} IS NULL OR ${a.statusCode} NOT BETWEEN 200 AND 299)`,
        lastSuccessAt ? gt(a.attemptedAt, lastSuccessAt) : undefined,
      ),
    );
  return row?.at ?? null;
}

export async function partnerEndpoint(db: Db, partnerId: number, id: string) {
  const [row] = await db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.partnerId, partnerId)));
  return row;
}

/** An endpoint's attempts, newest first, after `after` (the last one of the previous page) when given. */
export function endpointAttempts(
  db: Db,
  endpointId: string,
  after: { at: Date; id: number } | undefined,
  limit: number,
) {
  const a = webhookAttempts;
  return db
    .select({
      id: a.id,
      eventId: a.deliveryId,
      type: webhookDeliveries.type,
      reviewId: webhookDeliveries.reviewCode,
      attempt: a.attempt,
      statusCode: a.statusCode,
      error: a.error,
      durationMs: a.durationMs,
      attemptedAt: a.attemptedAt,
      nextAttemptAt: a.nextAttemptAt,
    })
    .from(a)
    .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, a.deliveryId))
    .where(
      and(
        eq(a.endpointId, endpointId),
        after ? sql`(${a.attemptedAt}, ${a.id}) < (${after.at.toISOString()}::timestamptz, ${after.id})` : undefined,
      ),
    )
    .orderBy(desc(a.attemptedAt), desc(a.id))
    .limit(literalLimit(limit + 1));
}
