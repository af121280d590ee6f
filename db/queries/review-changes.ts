import { createHash } from 'node:crypto';
import { and, asc, desc, eq, lt, type SQLWrapper, sql } from 'drizzle-orm';
import { type Db, liftRequestBounds } from '../client';
import { brands, reviewChanges, reviewChangesPruned, reviewFeedHistory, reviews, shops } from '../schema';
import type { BrandScope } from './brands';
import { literalLimit } from './pagination';
import { preparedOnce } from './prepared';
import { afterInList, LIST_ORDER, type ReviewPosition, reviewColumns, toReview } from './reviews';

// The review change feed (D-26). A walk first reads every review the brand has, in the list's order, then
// the changes recorded after the last one its first read saw. Positions are PostgreSQL transaction ids: the
// feed only reads changes of transactions below the oldest one still in flight, which have all committed
// or aborted on the server read, so nothing can appear behind a position once it is handed out. Every
// position also names the history it was taken in: the server's system identifier and the database's feed
// history, so a position of another history (a restore elsewhere, or one the operator expired) is refused.

/** A place in the brand's change record: after change `seq` of transaction `xid`. */
export type ChangePosition = { xid: number; seq: number };

/**
 * Where a walk stands. `walk`: inside its first read of every review, after `after` in the list's order,
 * with the changes after `start` to replay. `changes`: after a change. Both carry the history and the
 * brand's feed epoch they began under: a walk of another history or epoch starts again.
 */
export type FeedPosition =
  | { kind: 'walk'; history: string; epoch: number; start: ChangePosition; after: ReviewPosition | undefined }
  | ({ kind: 'changes'; history: string; epoch: number } & ChangePosition);

export type ReviewChange = {
  review_id: string;
  change: 'UPSERT' | 'DELETE';
  review: ReturnType<typeof toReview> | null;
};

export type FeedPage = { items: ReviewChange[]; hasNext: boolean; next: FeedPosition };

/**
 * Why a page cannot be read here: `expired`, the walk can never be served again (another history or epoch,
 * or changes after it pruned); `behind`, this server has not seen the walk's position. A replica answers
 * `behind` while it catches up (the call runs again on the primary, D-23); the primary, never for a
 * position of its own history.
 */
export type FeedRefusal = 'expired' | 'behind';

/** The oldest transaction the server read still has in flight, as seen by the statement that reads it. */
const horizon = sql<string>`pg_snapshot_xmin(pg_current_snapshot())::text`;

/** The server's horizon now: the feed reads the changes of transactions below it (a transaction id). */
export async function feedHorizon(db: Db): Promise<number> {
  const [row] = await db.select({ horizon }).from(sql`(SELECT 1) AS one`);
  return Number(row?.horizon ?? 0);
}

/** The latest transaction that may have committed by now: every change committed earlier is at or below it. */
export async function latestTransaction(db: Db): Promise<number> {
  const [row] = await db
    .select({ xmax: sql<string>`pg_snapshot_xmax(pg_current_snapshot())::text` })
    .from(sql`(SELECT 1) AS one`);
  return Number(row?.xmax ?? 1) - 1;
}

/** The brand a feed statement reads, bound at each call. */
const brandId = sql.placeholder('brand');

/**
 * The brand's row as the statement sees it (its epoch and range, its pruned mark), the server's horizon,
 * and for a new walk the brand's last change below the horizon, where the walk's changes will start: a
 * quiet brand's first page, and its cursor, are the same from call to call. Every row of a page carries
 * this state as one JSON value, which costs the server one field a row to map instead of six.
 */
function positionOf(db: Db, newWalk: boolean) {
  const lastSeen = db
    .select({ xid: reviewChanges.xid, seq: reviewChanges.seq })
    .from(reviewChanges)
    .where(and(eq(reviewChanges.brandId, brandId), sql`${reviewChanges.xid} < ${horizon}::bigint`))
    .orderBy(desc(reviewChanges.xid), desc(reviewChanges.seq))
    // A walk under way holds its start in its cursor: LIMIT 0 reads nothing, and both shapes map alike.
    .limit(literalLimit(newWalk ? 1 : 0))
    .as('last_seen');
  const position = db
    .select({
      state: sql<State>`json_build_object(
        'horizon', ${horizon}, 'epoch', ${brands.feedEpoch},
        'system', (SELECT system_identifier::text FROM pg_control_system()),
        'history', (SELECT ${reviewFeedHistory.history} FROM ${reviewFeedHistory}),
        'prunedXid', ${reviewChangesPruned.xid}, 'prunedSeq', ${reviewChangesPruned.seq},
        'lastXid', ${lastSeen.xid}, 'lastSeq', ${lastSeen.seq})`.as('state'),
      min: brands.criticalStarMin,
      max: brands.criticalStarMax,
    })
    .from(brands)
    .leftJoin(reviewChangesPruned, eq(reviewChangesPruned.brandId, brands.id))
    .leftJoin(lastSeen, sql`true`)
    .where(eq(brands.id, brandId))
    // A LIMIT keeps PostgreSQL from pulling the subquery up into the page: its state is built once, not a row.
    .limit(literalLimit(1))
    .as('position');
  // The review's columns sit beside the change's own: drizzle maps a flat row at less cost than a nested one.
  const fields = {
    state: position.state,
    ...reviewColumns({ criticalRange: { min: position.min, max: position.max } }),
  };
  return { position, fields };
}

/** Each key joined to the review it names as the brand has it now; none is a DELETE. */
const sameReview = (code: SQLWrapper) => and(eq(reviews.reviewCode, code), eq(reviews.brandId, brandId));

/** A page of the brand's recorded changes after (xid, seq), of transactions below the horizon only. */
function changesStatement(db: Db, limit: number) {
  const { position, fields } = positionOf(db, false);
  const keys = db
    .select({ xid: reviewChanges.xid, seq: reviewChanges.seq, reviewCode: reviewChanges.reviewCode })
    .from(reviewChanges)
    .where(
      and(
        eq(reviewChanges.brandId, brandId),
        sql`(${reviewChanges.xid}, ${reviewChanges.seq}) > (${sql.placeholder('xid')}, ${sql.placeholder('seq')})`,
        sql`${reviewChanges.xid} < ${horizon}::bigint`,
      ),
    )
    .orderBy(asc(reviewChanges.xid), asc(reviewChanges.seq))
    .limit(literalLimit(limit + 1))
    .as('keys');
  return db
    .select({ ...fields, code: keys.reviewCode, xid: keys.xid, seq: keys.seq })
    .from(position)
    .leftJoin(keys, sql`true`)
    .leftJoin(reviews, sameReview(keys.reviewCode))
    .leftJoin(shops, eq(shops.id, reviews.shopId))
    .orderBy(asc(keys.xid), asc(keys.seq));
}

/** A page of the brand's reviews in the list's order (D-9), after a position when `after`: keys first. */
function walkStatement(db: Db, limit: number, newWalk: boolean, after: boolean) {
  const { position, fields } = positionOf(db, newWalk);
  const afterPosition = after && afterInList(sql.placeholder('afterAt'), sql.placeholder('afterCode'));
  const keys = db
    .select({ writtenAt: reviews.writtenAt, reviewCode: reviews.reviewCode })
    .from(reviews)
    .where(and(eq(reviews.brandId, brandId), afterPosition || undefined))
    .orderBy(...LIST_ORDER)
    .limit(literalLimit(limit + 1))
    .as('keys');
  return db
    .select({ ...fields, code: keys.reviewCode, writtenAt: keys.writtenAt })
    .from(position)
    .leftJoin(keys, sql`true`)
    .leftJoin(reviews, sameReview(keys.reviewCode))
    .leftJoin(shops, eq(shops.id, reviews.shopId))
    .orderBy(desc(keys.writtenAt), desc(keys.reviewCode));
}

/**
 * One page of the feed after `from` (or from the start of a new walk), read in one statement on one server:
 * the history, the brand's epoch and range, the horizon, and the rows. Statements are prepared once per
 * shape (D-25). A FeedRefusal when the walk cannot be served here.
 */
export async function readReviewChanges(
  db: Db,
  brand: BrandScope,
  from: FeedPosition | undefined,
  limit: number,
): Promise<FeedPage | FeedRefusal | undefined> {
  if (from?.kind === 'changes') {
    const read = await readChangeRows(db, brand, from, limit);
    if (read === undefined || typeof read === 'string') return read;
    return { items: lastOfEach(read.rows).map(itemOf), hasNext: read.hasNext, next: read.next };
  }

  const read = await readWalkRows(db, brand, from, limit);
  if (read === undefined || typeof read === 'string') return read;
  return { items: latestOfEach(read.rows), hasNext: true, next: read.next };
}

type WalkPosition = Extract<FeedPosition, { kind: 'walk' }>;

/** A page of a walk's first read: the brand's reviews after `from` (or from the start of a new walk). */
async function readWalkRows(db: Db, brand: BrandScope, from: WalkPosition | undefined, limit: number) {
  const after = from?.after;
  const shape = `review_walk ${limit}${from ? '' : ' new'}${after ? ' after' : ''}`;
  const statement = preparedOnce(db, shape, () => walkStatement(db, limit, !from, Boolean(after)));
  const values = after
    ? { brand: brand.id, afterAt: after.writtenAt.toISOString(), afterCode: after.reviewCode }
    : { brand: brand.id };
  const rows = await statement.execute(values);
  const state = rows[0]?.state;
  if (!state) return undefined;
  const refusal = from && judge(state, from, from.start);
  if (refusal) return refusal;
  const history = from?.history ?? historyOf(state);
  const epoch = from?.epoch ?? state.epoch;
  const start = from?.start ?? seenBy(state);
  const listed = rows.filter((row) => row.code !== null);
  const found = listed.slice(0, limit);
  const last = found.at(-1);
  // The walk's last page hands over to the changes made since it started, which the next call reads.
  const next: FeedPosition =
    listed.length > limit && last?.code && last.writtenAt
      ? { kind: 'walk', history, epoch, start, after: { writtenAt: last.writtenAt, reviewCode: last.code } }
      : { kind: 'changes', history, epoch, ...start };
  const walkAfter = (row: (typeof found)[number]): WalkPosition => ({
    kind: 'walk',
    history,
    epoch,
    start,
    after: { writtenAt: row.writtenAt as Date, reviewCode: row.code as string },
  });
  return { rows: found, next, walkAfter };
}

/** A position after a change: where a reader of the change record (not a walk) stands. */
export type ChangesPosition = Extract<FeedPosition, { kind: 'changes' }>;

/** An item of the change record, with the position after its review's last change in the page. */
export type RecordedChange = ReviewChange & { position: ChangesPosition };

/**
 * A page of the brand's change record after `from`, as the feed reads it (same statement, same refusals),
 * each item with its own position: a reader that stops between items (a webhook endpoint, D-28) resumes
 * exactly there.
 */
export async function readRecordedChanges(
  db: Db,
  brand: BrandScope,
  from: ChangesPosition,
  limit: number,
): Promise<{ items: RecordedChange[]; hasNext: boolean; next: ChangesPosition } | FeedRefusal | undefined> {
  const read = await readChangeRows(db, brand, from, limit);
  if (read === undefined || typeof read === 'string') return read;
  const items = lastOfEach(read.rows).map((row) => ({
    ...itemOf(row),
    position: { ...from, xid: Number(row.xid), seq: Number(row.seq) },
  }));
  return { items, hasNext: read.hasNext, next: read.next };
}

/** An item of the feed with the position right after it: a walk's, or the change record's. */
export type PositionedChange = ReviewChange & { position: FeedPosition };

/**
 * A page of the feed after any position it hands out (inside a walk or after it), each item with its own
 * position, as readRecordedChanges gives them after a change: what a replay from a partner's cursor reads.
 */
export async function readPositionedChanges(
  db: Db,
  brand: BrandScope,
  from: FeedPosition,
  limit: number,
): Promise<{ items: PositionedChange[]; hasNext: boolean; next: FeedPosition } | FeedRefusal | undefined> {
  if (from.kind === 'changes') return readRecordedChanges(db, brand, from, limit);
  const read = await readWalkRows(db, brand, from, limit);
  if (read === undefined || typeof read === 'string') return read;
  const items = read.rows.map((row) => ({ ...itemOf(row), position: read.walkAfter(row) }));
  return { items, hasNext: true, next: read.next };
}

/**
 * Where a new walk's changes would start: the brand's last change below the horizon. A reader starting
 * here reads what is recorded from now on. Read as a new walk's empty first page.
 */
export async function currentChangesPosition(db: Db, brand: BrandScope): Promise<ChangesPosition | undefined> {
  const page = await readReviewChanges(db, brand, undefined, 0);
  if (page === undefined || typeof page === 'string' || page.next.kind !== 'changes') return undefined;
  return page.next;
}

async function readChangeRows(db: Db, brand: BrandScope, from: ChangesPosition, limit: number) {
  const statement = preparedOnce(db, `review_changes ${limit}`, () => changesStatement(db, limit));
  const rows = await statement.execute({ brand: brand.id, xid: from.xid, seq: from.seq });
  const state = rows[0]?.state;
  if (!state) return undefined;
  const refusal = judge(state, from, from);
  if (refusal) return refusal;
  const changed = rows.filter((row) => row.code !== null);
  const found = changed.slice(0, limit);
  const last = found.at(-1);
  const next: ChangesPosition = last ? { ...from, xid: Number(last.xid), seq: Number(last.seq) } : from;
  return { rows: found, hasNext: changed.length > limit, next };
}

type State = {
  horizon: string;
  system: string;
  history: string;
  epoch: number;
  prunedXid: number | null;
  prunedSeq: number | null;
  lastXid: number | null;
  lastSeq: number | null;
};

/** Where a new walk's changes start: after the last change its first read saw, or the last pruned one. */
function seenBy(state: State): ChangePosition {
  if (state.lastXid !== null && state.lastSeq !== null) return { xid: state.lastXid, seq: state.lastSeq };
  if (state.prunedXid !== null && state.prunedSeq !== null) return { xid: state.prunedXid, seq: state.prunedSeq };
  return { xid: 0, seq: 0 };
}

/** The history a position is taken in: the server's system identifier and the feed's history, shortened. */
function historyOf(state: State): string {
  return createHash('sha256').update(`${state.system}/${state.history}`).digest('base64url').slice(0, 11);
}

/** Whether this server can serve a walk at `at`. */
function judge(state: State, from: FeedPosition, at: ChangePosition): FeedRefusal | undefined {
  if (from.history !== historyOf(state) || state.epoch > from.epoch) return 'expired';
  if (state.prunedXid !== null && state.prunedSeq !== null && after(state.prunedXid, state.prunedSeq, at)) {
    return 'expired';
  }
  // A position inside transaction xid (seq > 0) has seen it end: a server holding it in flight is behind.
  const reached = Number(state.horizon);
  if (state.epoch < from.epoch || reached < at.xid || (reached === at.xid && at.seq > 0)) return 'behind';
  return undefined;
}

const after = (xid: number, seq: number, at: ChangePosition) => xid > at.xid || (xid === at.xid && seq > at.seq);

/** A row of a feed statement: the change's review_id, and the review's columns, all null when it is gone. */
type Row = { code: string | null; review_id: string | null };

/**
 * The page's items: each review once, where its last change was (all show its state now), an UPSERT if the
 * brand has it, else a DELETE.
 */
function latestOfEach<R extends Row>(rows: R[]): ReviewChange[] {
  return lastOfEach(rows).map(itemOf);
}

/** Each review's last row, in the order of those last rows. */
function lastOfEach<R extends Row>(rows: R[]): R[] {
  const last = new Map<string, R>();
  for (const row of rows) {
    const code = row.code as string;
    last.delete(code);
    last.set(code, row);
  }
  return [...last.values()];
}

function itemOf<R extends Row>(row: R): ReviewChange {
  const code = row.code as string;
  return row.review_id
    ? { review_id: code, change: 'UPSERT', review: toReview(row as R & Parameters<typeof toReview>[0]) }
    : { review_id: code, change: 'DELETE', review: null };
}

/**
 * Removes changes recorded before `before` (the retention, D-26), noting per brand the last position
 * removed, so a walk that still needed one answers 410 instead of skipping it. Runs in the daily job.
 */
export async function pruneReviewChanges(db: Db, before: Date): Promise<number> {
  const pruned = await db.transaction(async (tx) => {
    await liftRequestBounds(tx);
    // Each brand's mark is its last old change of a transaction below the horizon: every transaction that
    // could note a change behind the mark has ended, so none can appear there later.
    const lastOfEachBrand = tx
      .selectDistinctOn([reviewChanges.brandId], {
        brandId: reviewChanges.brandId,
        xid: reviewChanges.xid,
        seq: reviewChanges.seq,
      })
      .from(reviewChanges)
      .where(and(lt(reviewChanges.changedAt, before), sql`${reviewChanges.xid} < ${horizon}::bigint`))
      .orderBy(reviewChanges.brandId, desc(reviewChanges.xid), desc(reviewChanges.seq));
    await tx
      .insert(reviewChangesPruned)
      .select(lastOfEachBrand)
      .onConflictDoUpdate({
        target: reviewChangesPruned.brandId,
        set: { xid: sql`excluded.xid`, seq: sql`excluded.seq` },
        setWhere: sql`(excluded.xid, excluded.seq) > (${reviewChangesPruned.xid}, ${reviewChangesPruned.seq})`,
      });
    // Everything up to a brand's mark goes, a younger change behind it too: a walk before the mark is 410
    // and a new walk starts after it, so no walk reads such a change, and none is left to strand a new walk.
    const behindMark = sql`EXISTS (SELECT 1 FROM ${reviewChangesPruned}
      WHERE ${reviewChangesPruned.brandId} = ${reviewChanges.brandId}
        AND (${reviewChanges.xid}, ${reviewChanges.seq}) <= (${reviewChangesPruned.xid}, ${reviewChangesPruned.seq}))`;
    const removed = await tx.$count(reviewChanges, behindMark);
    await tx.delete(reviewChanges).where(behindMark);
    return removed;
  });
  // Fresh statistics, as for the aggregate's tables (db/aggregate.ts): without them the planner takes the
  // record for empty and sorts a brand's changes instead of reading them in the index's order.
  await db.execute(sql`ANALYZE ${reviewChanges}`);
  return pruned;
}

/** The key that seals the feed's cursors, made once per database by its migration (D-26). */
export async function loadFeedCursorKey(db: Db): Promise<Buffer> {
  const [row] = await db.select({ key: reviewFeedHistory.cursorKey }).from(reviewFeedHistory);
  if (!row) throw new Error('review_feed_history has no row: run the migrations');
  return Buffer.from(row.key, 'base64');
}

/** Starts a new feed history: every cursor issued so far answers 410 (after a restore in place, D-26). */
export async function expireFeedCursors(db: Db): Promise<void> {
  await db.update(reviewFeedHistory).set({ history: sql`gen_random_uuid()` });
}
