import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client';
import { findPartnerByName } from '../../db/queries/apiKeys';
import type { BrandScope } from '../../db/queries/brands';
import {
  type ChangesPosition,
  currentChangesPosition,
  loadFeedCursorKey,
  readPositionedChanges,
  readRecordedChanges,
} from '../../db/queries/review-changes';
import { insertClaimedDelivery, insertDeliveries, recordAttempts } from '../../db/queries/webhook-deliveries';
import {
  brandCodesOf,
  brandsOfEndpoint,
  brandsOfPartner,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  positionsOf,
  resealEndpointSecrets,
  resumeEndpoint,
  rotateEndpointSecret,
  setEndpointStatus,
  storePositions,
  type WebhookEndpoint,
} from '../../db/queries/webhooks';
import { newSigningSecret, openSecret, sealSecret, secretsInUse } from '../../db/webhook-secrets';
import { openFeedCursor } from '../../routers/reviews/feed-cursor';
import { ATTEMPT_TIMEOUT_MS, type AttemptOutcome, postDelivery } from './attempt';
import { feedExpiredEvent, reviewEvents, testEvent } from './events';
import { newOpaqueId } from './ids';
import { signedHeaders } from './sign';
import { checkTarget, type Target } from './target';
import { RETRY_SCHEDULE_MS } from './worker';

// What the operator's `webhooks` command does (D-28), apart from its argument parsing and printing.

/** A refusal of the operator's request: one line, exit status 2. */
export class Refusal extends Error {}

/** How long a rotated-out secret keeps signing. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export async function addEndpoint(
  db: Db,
  secretsKey: Buffer,
  request: { partner: string; target: Target; brandCodes: string[]; criticalOnly: boolean },
): Promise<{ id: string; secret: string }> {
  const partner = await findPartnerByName(db, request.partner);
  if (!partner) throw new Refusal(`no partner named ${request.partner}`);
  const codes = request.brandCodes;
  const chosen = codes.length ? await brandsOfPartner(db, partner.id, codes) : undefined;
  const foreign = codes.filter((code) => !chosen?.some((brand) => brand.brandCode === code));
  if (foreign.length) throw new Refusal(`not a brand of ${partner.name}: ${foreign.join(', ')}`);
  const covered = chosen ?? (await brandsOfPartner(db, partner.id));
  const id = newOpaqueId('wh');
  const secret = newSigningSecret();
  await insertEndpoint(
    db,
    {
      id,
      partnerId: partner.id,
      url: request.target.url.href,
      brandIds: chosen ? chosen.map((brand) => brand.id) : null,
      criticalOnly: request.criticalOnly,
      secret: sealSecret(secretsKey, id, secret),
    },
    await currentPositions(db, covered),
  );
  return { id, secret };
}

/** Every endpoint as the operator's list shows it; never a secret. */
export async function describeEndpoints(db: Db) {
  const rows = await listEndpoints(db);
  const codes = await brandCodesOf(db, [...new Set(rows.flatMap((row) => row.endpoint.brandIds ?? []))]);
  return rows.map(({ endpoint, partner, partnerActive }) => ({
    id: endpoint.id,
    partner: partnerActive ? partner : `${partner} (deactivated: paused)`,
    url: endpoint.url,
    brands: endpoint.brandIds
      ? endpoint.brandIds.map((brandId) => codes.get(brandId) ?? '?').join(',')
      : '(every brand)',
    events: endpoint.criticalOnly ? 'critical upserts' : 'all',
    status: endpoint.status === 'ACTIVE' ? 'ACTIVE' : `DISABLED: ${endpoint.disabledReason ?? ''}`,
  }));
}

export async function endpointNamed(db: Db, id: string): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(db, id);
  if (!endpoint) throw new Refusal(`no webhook ${id}`);
  return endpoint;
}

export async function disableEndpoint(db: Db, endpoint: WebhookEndpoint) {
  await setEndpointStatus(db, endpoint.id, 'DISABLED', 'disabled by the operator');
}

/**
 * Resumes every brand from its stored position; when the feed can no longer continue one, says why (an
 * Error, exit status 1) unless `fromNow`, which starts every brand from now with one feed.expired event.
 */
export async function enableEndpoint(db: Db, endpoint: WebhookEndpoint, fromNow: boolean, now = new Date()) {
  const covered = await brandsOfEndpoint(db, endpoint);
  const stored = await positionsOf(db, endpoint.id);
  const lost: BrandScope[] = [];
  for (const brand of covered) {
    const position = stored.get(brand.id);
    if (position && (await readRecordedChanges(db, brand, position, 1)) === 'expired') lost.push(brand);
  }
  if (lost.length && !fromNow) {
    const codes = lost.map((brand) => brand.brandCode).join(', ');
    throw new Error(
      `webhook ${endpoint.id} cannot resume ${codes}: the feed no longer continues from its position (retention, a range change or a restore); enable --from-now starts from now with a feed.expired event`,
    );
  }
  if (fromNow) {
    await startFromNow(db, endpoint);
    await insertDeliveries(
      db,
      covered.map((brand) => feedExpiredEvent(endpoint, brand, now)),
    );
  }
  await resumeEndpoint(db, endpoint.id);
}

/** A new secret; the current one signs beside it for ROTATION_OVERLAP_MS (one still in its overlap is dropped). */
export async function rotateSecret(db: Db, secretsKey: Buffer, endpoint: WebhookEndpoint, now = new Date()) {
  // Refuses under another key before anything is written.
  openSecret(secretsKey, endpoint.id, endpoint.secret);
  const secret = newSigningSecret();
  const until = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  await rotateEndpointSecret(db, endpoint.id, sealSecret(secretsKey, endpoint.id, secret), endpoint.secret, until);
  return { secret, until };
}

/**
 * New events (new webhook-ids) from any cursor the feed or an event gave for a brand of the endpoint, to the
 * brand's current position: inside a walk, the rest of the walk's reviews come first, as the feed would give
 * them. A cursor the feed no longer continues from is an Error (exit status 1), not a refusal.
 */
export async function replayFrom(db: Db, endpoint: WebhookEndpoint, cursor: string, brandCodes: string[]) {
  const key = await loadFeedCursorKey(db);
  const covered = (await brandsOfEndpoint(db, endpoint)).filter(
    (brand) => brandCodes.length === 0 || brandCodes.includes(brand.brandCode),
  );
  const opened = covered.flatMap((brand) => {
    const position = openFeedCursor(key, cursor, { brandCode: brand.brandCode, partnerId: endpoint.partnerId });
    return position ? [{ brand, position }] : [];
  });
  const [found] = opened;
  if (!found) throw new Refusal(`not a feed cursor of a brand of webhook ${endpoint.id}`);
  const { brand } = found;
  let position = found.position;
  let made = 0;
  for (;;) {
    const page = position === 'expired' ? 'expired' : await readPositionedChanges(db, brand, position, 100);
    if (page === undefined) throw new Error(`brand ${brand.brandCode} is gone`);
    if (page === 'expired') throw new Error(EXPIRED_CURSOR);
    if (page === 'behind') throw new Error('the database has not reached this cursor yet: try again in a moment');
    const events = reviewEvents(endpoint, brand, page.items, key, new Date());
    await insertDeliveries(db, events);
    made += events.length;
    position = page.next;
    if (!page.hasNext) break;
  }
  return { brandCode: brand.brandCode, events: made };
}

/** Why replay cannot start from a cursor the feed answers 410 to. */
export const EXPIRED_CURSOR =
  'the feed no longer continues from this cursor (retention, a range change or a restore): the partner walks the feed again';

/** Every brand of the endpoint read from its current position: what changes from now on is delivered. */
export async function startFromNow(db: Db, endpoint: WebhookEndpoint) {
  await storePositions(db, endpoint.id, await currentPositions(db, await brandsOfEndpoint(db, endpoint)));
}

/**
 * The operator's `test`: a webhook.test event attempted here and now, answered with its outcome. Attempted
 * by the command rather than queued for a worker, so the answer needs no running instance and is the
 * command's own attempt. It is recorded as the event's first attempt (the partner sees it among the
 * deliveries), claimed from the start so no worker sends it meanwhile; a failed one is left to the workers'
 * retry schedule from its second attempt.
 */
export async function attemptTest(
  db: Db,
  secretsKey: Buffer,
  endpoint: WebhookEndpoint,
  { allowPrivateTargets, timeoutMs = ATTEMPT_TIMEOUT_MS }: { allowPrivateTargets: boolean; timeoutMs?: number },
): Promise<{ id: string; outcome: AttemptOutcome }> {
  const now = new Date();
  // Opened first: under another key the command stops before anything is written.
  const secrets = secretsInUse(secretsKey, endpoint, now);
  const event = testEvent(endpoint, now);
  const owner = `webhooks test ${randomUUID()}`;
  await insertClaimedDelivery(db, event, { owner, until: new Date(now.getTime() + timeoutMs + LEASE_MARGIN_MS) });
  const started = performance.now();
  const checked = await checkTarget(endpoint.url, allowPrivateTargets);
  const outcome: AttemptOutcome =
    'refused' in checked
      ? {
          statusCode: null,
          error: `target refused: ${checked.refused}`,
          durationMs: Math.round(performance.now() - started),
          retryAfterMs: undefined,
        }
      : await postDelivery(checked.target, signedHeaders(event.id, event.body, secrets, new Date()), event.body, {
          timeoutMs,
          signal: new AbortController().signal,
        });
  const attemptedAt = new Date();
  const delivered = outcome.error === null;
  const retryIn = Math.max(RETRY_SCHEDULE_MS[1] ?? 0, outcome.retryAfterMs ?? 0);
  await recordAttempts(db, owner, [
    {
      id: event.id,
      endpointId: endpoint.id,
      attempt: 1,
      ...outcome,
      attemptedAt,
      delivered,
      nextAttemptAt: delivered ? null : new Date(attemptedAt.getTime() + retryIn),
    },
  ]);
  return { id: event.id, outcome };
}

/** How long past the attempt's own bound the test's claim lasts: recording it takes a moment. */
const LEASE_MARGIN_MS = 30_000;

/**
 * Every endpoint's secrets (a previous one in its overlap too) opened with `fromKey` and sealed again under
 * `toKey`, all in one transaction. A secret that already opens with `toKey` is left as it is (a second run
 * does nothing); one that opens with neither is a refusal and nothing is written.
 */
export async function resealSecrets(db: Db, fromKey: Buffer, toKey: Buffer) {
  let current = 0;
  const resealed = await resealEndpointSecrets(db, (row) => {
    const reseal = (sealed: string) => {
      if (opens(toKey, row.id, sealed)) return undefined;
      if (!opens(fromKey, row.id, sealed))
        throw new Refusal(
          `WEBHOOK_SECRETS_OLD_KEY does not open the secret of webhook ${row.id}: not the key it was sealed with`,
        );
      return sealSecret(toKey, row.id, openSecret(fromKey, row.id, sealed));
    };
    const secret = reseal(row.secret);
    const previousSecret = row.previousSecret === null ? undefined : reseal(row.previousSecret);
    if (secret === undefined && previousSecret === undefined) {
      current++;
      return undefined;
    }
    return { secret: secret ?? row.secret, previousSecret: previousSecret ?? row.previousSecret };
  });
  return { resealed, current };
}

function opens(key: Buffer, endpointId: string, sealed: string): boolean {
  try {
    openSecret(key, endpointId, sealed);
    return true;
  } catch {
    return false;
  }
}

/** Each brand's current position: an endpoint starts there, delivering what changes from now on. */
async function currentPositions(db: Db, covered: BrandScope[]) {
  const positions: { brandId: number; position: ChangesPosition }[] = [];
  for (const brand of covered) {
    const position = await currentChangesPosition(db, brand);
    if (position) positions.push({ brandId: brand.id, position });
  }
  return positions;
}
