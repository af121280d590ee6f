import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Db } from '../../db/client';
import { API_KEY_FORMAT, hashApiKey } from '../../db/keys';
import { kstToday } from '../../db/kst';
import { PoolBusyError, type PoolSlots } from '../../db/pool-slots';
import type { ApiKeyState } from '../../db/queries/apiKeys';
import { replicaFailureIn } from '../../db/replicas';
import { PUBLIC_CODE } from '../../db/schema/columns';
import { answerConditionally } from './conditional';
import type { PartnerScope, RequestContext } from './context';
import { errorEnvelope, PartnerApiError, type PartnerErrorCode, partnerCodeOf } from './errors';
import { metrics } from './metrics';
import { rateLimitHeaders, secondsUntil } from './ratelimit/sliding-window';
import { tracing } from './tracing';

// Every error leaves here: tRPC's shape (the SDK needs it) with the partner envelope under `data` for REST.
const t = initTRPC
  .context<RequestContext>()
  .meta<OpenApiMeta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error }) {
      const partner = errorEnvelope(partnerCodeOf(error));
      return {
        code: shape.code,
        message: partner.message,
        // No `path`: the procedure name is the caller's text, and nothing the caller sent is echoed (D-18).
        data: { code: shape.data.code, httpStatus: partner.status_code, partner },
      };
    },
  });

export const createCallerFactory = t.createCallerFactory;
export const router = t.router;

// The chain follows D-13: key (401/403), rate limit (429), parameters (400), brand (404), the resource (404).

/** D-21, D-23: one server per call, a usable replica else the primary; a replica's failure retries on the primary. */
async function onOneServer<R extends { ok: boolean; error?: unknown }>(
  ctx: RequestContext,
  run: (db: Db, onReplica: boolean) => Promise<R>,
): Promise<R> {
  const replica = ctx.replicas?.pick();
  if (replica) {
    const result = await holding(replica.handle.slots, () => run(replica.handle.db, true)).catch((error: unknown) => {
      if (error instanceof PoolBusyError) return undefined;
      throw error;
    });
    const failure = result && !result.ok && !ctx.signal.aborted ? replicaFailureIn(result.error) : undefined;
    if (failure === 'lost') ctx.replicas?.failed(replica);
    if (result && !failure) return result;
  }
  try {
    return await holding(ctx.slots, () => run(ctx.db, false));
  } catch (error) {
    if (!(error instanceof PoolBusyError)) throw error;
    ctx.responseHeaders['Retry-After'] = String(error.retryAfterSeconds);
    throw new PartnerApiError('PARTNER_API_INTERNAL_ERROR', { cause: error });
  }
}

const holding = <T>(slots: PoolSlots | undefined, work: () => Promise<T>) => (slots ? slots.run(work) : work());

/** Waits for `work` until `signal` aborts (D-20); the work runs on, a statement until statement_timeout. */
export function untilAborted<T>(signal: AbortSignal, work: () => PromiseLike<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Error('aborted', { cause: signal.reason }));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    Promise.resolve()
      .then(work)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', abort));
  });
}

/** The key check (D-13) and per-key limit (D-14) for `calls` calls: a tRPC batch is checked before it runs (D-20). */
export async function checkKeyAndLimit(ctx: RequestContext, calls: number): Promise<PartnerScope> {
  const { refused, policy, limiter } = ctx.rateLimit;
  const keys = ctx.cache.keys;
  const arrivedAt = keys.now();
  // Only HTTP's optional whitespace (space, tab) around the value is not part of the key.
  const presented = ctx.apiKey?.replace(/^[\t ]+|[\t ]+$/g, '');
  const keyHash = presented ? hashApiKey(presented) : undefined;
  const wellFormed = presented !== undefined && API_KEY_FORMAT.test(presented);
  const now = ctx.now().getTime();
  const refusal = (key: ApiKeyState | undefined): PartnerErrorCode | undefined => {
    if (!key) return keyHash ? 'PARTNER_API_KEY_INVALID' : 'PARTNER_API_KEY_REQUIRED';
    if (key.revokedAt && key.revokedAt.getTime() <= now) return 'PARTNER_API_KEY_INACTIVE';
    if (key.expiresAt && key.expiresAt.getTime() <= now) return 'PARTNER_API_KEY_EXPIRED';
    if (!key.partnerActive) return 'PARTNER_API_FORBIDDEN';
    return undefined;
  };

  let key = keyHash && wellFormed ? keys.heldEntry(keyHash) : undefined;
  if (refusal(key)) {
    // D-14: a key the cache does not hold as valid counts against its address before its (shared) lookup.
    const guard = await refused.limit(ctx.clientAddress);
    metrics?.guardDecisions.inc({ decision: guard.success ? 'admitted' : 'refused' });
    if (keyHash && wellFormed && !key) key = await keys.lookedUp(keyHash, arrivedAt);
    if (key) noteKey(ctx, key);
    const code = refusal(key);
    if (code && !guard.success) {
      ctx.responseHeaders['Retry-After'] = String(secondsUntil(guard.retryAt ?? guard.reset, now));
      throw new PartnerApiError('PARTNER_API_RATE_LIMITED', { cause: new Error('refused-key guard') });
    }
    if (code) throw new PartnerApiError(code);
    // A key issued since the last load: valid after all, so it takes nothing from the address's budget.
    if (guard.success) await refused.refund(ctx.clientAddress);
  }
  if (!key || !keyHash) throw new PartnerApiError('PARTNER_API_INTERNAL_ERROR');
  noteKey(ctx, key);
  // Keyed on the key's hash, not its row id: unique across deployments that share one Redis.
  const identifier = `key:${keyHash}`;
  const decision = await limiter.limit(identifier, calls);
  metrics?.rateLimitDecisions.inc({ decision: decision.success ? 'admitted' : 'refused' });
  Object.assign(ctx.responseHeaders, rateLimitHeaders(policy, decision, ctx.now().getTime()));
  if (!decision.success) throw new PartnerApiError('PARTNER_API_RATE_LIMITED');
  return { partnerId: key.partnerId, keyId: key.keyId, keyHash, counted: { identifier, decision } };
}

/** D-22: who is calling, for the access line: the key's partner and its display prefix (D-4), never the key. */
function noteKey(ctx: RequestContext, key: ApiKeyState) {
  if (!ctx.access) return;
  ctx.access.partnerId = key.partnerId;
  ctx.access.keyPrefix = key.displayPrefix;
}

/** A read of the key's partner (D-13, D-14), naming the operation (D-22), 500 once the signal aborts (D-20). */
export const partnerProcedure = t.procedure.use(({ ctx, path, next }) => {
  if (ctx.access) ctx.access.operation ??= path;
  const call = async () => {
    const partner = await (ctx.authenticated ?? checkKeyAndLimit(ctx, 1));
    const result = await next({ ctx: { partner } });
    // D-27: an answer of a single call over HTTP gets its ETag, or becomes a 304.
    if (result.ok) await answerConditionally(ctx, partner, result.data);
    return result;
  };
  const bounded = async () => {
    try {
      return await untilAborted(ctx.signal, call);
    } catch (error) {
      if (ctx.signal.aborted) throw new PartnerApiError('PARTNER_API_INTERNAL_ERROR', { cause: ctx.signal.reason });
      throw error;
    }
  };
  return tracing ? tracing.procedure(path, bounded) : bounded();
});

/** `{brand_code}` of every brand path. Any string: a malformed code is simply a missing brand (404). */
export const brandCodeParam = z.string().describe('Brand identifier, from GET /partner/v1/brands.');

/** Where a rule across parameters reports a broken rule; any issue makes the call 400. */
export type ParameterIssues = { addIssue(issue: { code: 'custom'; message: string; path: string[] }): void };

/** What a rule across parameters judges: the operation's parameters, parsed, with the path's brand_code. */
export type BrandParameters<Shape extends z.ZodRawShape> = z.output<z.ZodObject<Shape>> & { brand_code: string };

/** Besides the parameters, a rule may use the KST "today" (D-5), and the partner and key of a feed cursor (D-26). */
export type CallFacts = { today: string; partnerId: number; feedCursorKey: () => Promise<Buffer> };

/** A read inside one brand of the key's partner: parameters first (400 before 404, D-13), then the brand. */
export function brandProcedure<Shape extends z.ZodRawShape>(
  parameters: Shape,
  /** Rules across parameters (from ≤ to, a cursor's brand), as 400; they get the call's facts (CallFacts). */
  check?: (input: BrandParameters<Shape>, issues: ParameterIssues, facts: CallFacts) => void | Promise<void>,
) {
  const schema = z.object({ brand_code: brandCodeParam, ...parameters });
  return partnerProcedure.input(schema).use(async ({ ctx, input, next }) => {
    // The request's KST day, read once: the rules judge and the operation uses the same one (D-5).
    const today = kstToday(ctx.now());
    if (check) {
      const broken: string[] = [];
      const issues = { addIssue: (issue: { message: string }) => void broken.push(issue.message) };
      const facts = { today, partnerId: ctx.partner.partnerId, feedCursorKey: ctx.feedCursorKey };
      await check(input as BrandParameters<Shape>, issues, facts);
      if (broken.length)
        throw new PartnerApiError('PARTNER_API_INVALID_PARAMETER', { cause: new Error(broken.join('; ')) });
    }
    const brand = await brandInScope(ctx, ctx.partner.partnerId, (input as { brand_code: string }).brand_code);
    if (!brand) throw new PartnerApiError('PARTNER_API_BRAND_NOT_FOUND');
    return onOneServer(ctx, (db, onReplica) => next({ ctx: { brand, today, db, onReplica } }));
  });
}

/** The path's brand if the partner's (foreign is missing); a miss waits for a lookup that started after the call. */
async function brandInScope(ctx: RequestContext, partnerId: number, brandCode: string) {
  if (!PUBLIC_CODE.test(brandCode)) return undefined;
  const brands = ctx.cache.brands;
  const arrivedAt = brands.now();
  let brand = brands.heldEntry(brandCode);
  if (brand?.partnerId !== partnerId) brand = await brands.lookedUp(brandCode, arrivedAt);
  return brand?.partnerId === partnerId ? brand : undefined;
}

/** A read of the key's partner's own rows in the database (its webhooks): on one server, holding a pool slot. */
export const partnerReadProcedure = partnerProcedure.use(({ ctx, next }) =>
  onOneServer(ctx, (db, onReplica) => next({ ctx: { db, onReplica } })),
);
