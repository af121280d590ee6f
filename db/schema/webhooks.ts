import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  pgTable,
  primaryKey,
  smallint,
  text,
} from 'drizzle-orm/pg-core';
import { brands } from './brands';
import { createdAt, instant } from './columns';
import { partners } from './partners';

// Webhooks (D-28): a partner's endpoints, each a reader of the review change feed with a position per brand,
// the events made from what it read, and every attempt to deliver them.

export const WEBHOOK_STATUSES = ['ACTIVE', 'DISABLED'] as const;
export const DELIVERY_STATUSES = ['PENDING', 'DELIVERED'] as const;

/**
 * An event's state as the partial indexes of its table state it: a literal. In place of a bound value, a
 * prepared statement's generic plan could not use those indexes, and would read the whole table.
 */
export function deliveryIs(state: (typeof DELIVERY_STATUSES)[number], status: AnyColumn): SQL {
  return sql`${status} = ${sql.raw(`'${state}'`)}`;
}

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    /** `wh_` and random characters: what the operator and the partner name it by, never a serial number. */
    id: text('id').primaryKey(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id),
    url: text('url').notNull(),
    /** The brands it covers; null: every brand of the partner, brands added later included. */
    brandIds: integer('brand_ids').array(),
    /** Upserts of critical reviews only, and no deletions. */
    criticalOnly: boolean('critical_only').notNull().default(false),
    /** The signing secret, sealed with AES-256-GCM under WEBHOOK_SECRETS_KEY: a dump alone does not reveal it. */
    secret: text('secret').notNull(),
    /** The secret before the last rotation, sealed likewise; it signs beside the new one until `previousSecretUntil`. */
    previousSecret: text('previous_secret'),
    previousSecretUntil: instant('previous_secret_until'),
    status: text('status', { enum: WEBHOOK_STATUSES }).notNull().default('ACTIVE'),
    disabledReason: text('disabled_reason'),
    ...createdAt,
  },
  (t) => [
    index('webhook_endpoints_partner_idx').on(t.partnerId, t.createdAt),
    check('webhook_endpoints_id_format', sql`${t.id} ~ '^wh_[A-Za-z0-9]{16,40}$'`),
    check('webhook_endpoints_status', sql`${t.status} IN ('ACTIVE', 'DISABLED')`),
  ],
);

/** Where an endpoint stands in a brand's change record: a position of the feed (D-26), always after a change. */
export const webhookPositions = pgTable(
  'webhook_positions',
  {
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    brandId: integer('brand_id')
      .notNull()
      .references(() => brands.id),
    history: text('history').notNull(),
    epoch: integer('epoch').notNull(),
    xid: bigint('xid', { mode: 'number' }).notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'webhook_positions_pk', columns: [t.endpointId, t.brandId] })],
);

/**
 * An event for an endpoint, made once from what its position read: its id is the `webhook-id` of every
 * attempt, and its body is fixed when made. A worker holds it while it attempts it (a lease, not a lock).
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** `msg_` and random characters: the receiver's idempotency key. */
    id: text('id').primaryKey(),
    /** The order events were made in: per review, they are delivered in this order. */
    seq: bigserial('seq', { mode: 'number' }).notNull().unique(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    /** Null for an event of no brand (`webhook.test`). */
    brandId: integer('brand_id'),
    reviewCode: text('review_code'),
    type: text('type').notNull(),
    body: text('body').notNull(),
    attempts: smallint('attempts').notNull().default(0),
    nextAttemptAt: instant('next_attempt_at').notNull().defaultNow(),
    leaseOwner: text('lease_owner'),
    leaseUntil: instant('lease_until'),
    /** PENDING until a 2xx; an endpoint disabled keeps its pending events, and `enable` resumes them. */
    status: text('status', { enum: DELIVERY_STATUSES }).notNull().default('PENDING'),
    deliveredAt: instant('delivered_at'),
    ...createdAt,
  },
  (t) => [
    // What workers claim from: the pending events of an endpoint, in order.
    index('webhook_deliveries_pending_idx').on(t.endpointId, t.seq).where(deliveryIs('PENDING', t.status)),
    // What keeps a review's events in order: an earlier pending event of the same review holds a later one.
    index('webhook_deliveries_pending_review_idx')
      .on(t.endpointId, t.reviewCode, t.seq)
      .where(deliveryIs('PENDING', t.status)),
    // The partner's view: when the endpoint last succeeded.
    index('webhook_deliveries_delivered_idx').on(t.endpointId, t.deliveredAt).where(deliveryIs('DELIVERED', t.status)),
    check('webhook_deliveries_status', sql`${t.status} IN ('PENDING', 'DELIVERED')`),
  ],
);

/** Each attempt at a delivery, as the partner sees it; kept 30 days (the daily job prunes them). */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    attempt: smallint('attempt').notNull(),
    /** The receiver's HTTP status; null when no answer came (refused target, connection error, timeout). */
    statusCode: smallint('status_code'),
    /** Why it failed, or the start of the receiver's answer: at most 1 KB. */
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    attemptedAt: instant('attempted_at').notNull().defaultNow(),
    /** When the delivery is tried again; null once it succeeded or was given up. */
    nextAttemptAt: instant('next_attempt_at'),
  },
  (t) => [
    index('webhook_attempts_endpoint_idx').on(t.endpointId, t.attemptedAt.desc(), t.id.desc()),
    index('webhook_attempts_delivery_idx').on(t.deliveryId),
    check('webhook_attempts_error_length', sql`octet_length(${t.error}) <= 1024`),
  ],
);
