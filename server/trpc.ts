import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import { untilAborted } from '../db/cancellation';
import type { Db } from '../db/client';
import { hashApiKey, isWellFormedApiKey } from '../db/keys';
import { kstToday } from '../db/kst';
import { poolBusyIn, withStatementLane } from '../db/pool-gate';
import type { ApiKeyState } from '../db/queries/apiKeys';
import { brandScopeName } from '../db/queries/brands';
import { replicaFailureIn } from '../db/replica-failures';
import { isPublicCode } from '../db/schema/columns';
import type { RequestContext } from './context';
import { errorEnvelope, PartnerApiError, type PartnerErrorCode, partnerCodeOf } from './errors';
import { metrics } from './metrics';
import { rateLimitHeaders, secondsUntil } from './ratelimit/headers';
import { tracing } from './tracing';

// 1. Initialisation. Every error leaves through this formatter: tRPC's shape stays (the SDK's client
// needs it) with the message replaced by the fixed text, no stack, and the partner envelope under `data`,
// which REST sends as the whole body (server/workarounds/trpc-to-openapi-error-body.ts).
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

// 2. Base procedures. The order of D-13 is the order of the chain: key (401/403), rate limit (429),
// parameters (400, the operation's .input), brand (404), then the operation's own resource (404).

/**
 * D-23: a call reads from one server, all of its statements: a replica in rotation when there is one
 * (`ctx.db`), else the primary; `ctx.primary` is always the primary, for what must be read there. Reads are
 * idempotent, so a replica that goes away costs its calls a retry on the primary, not an error:
 * - a call that failed for the replica's sake (db/replica-failures.ts) runs again, whole, on the primary;
 *   a lost connection also takes the replica out of rotation at once;
 * - a call still waiting on a replica when a check finds it unreachable (stalled, its answers stopped)
 *   runs again on the primary then, instead of waiting for its deadline; the permits its statements
 *   hold on the replica's pool come back within the gate's hold limit (D-21) if the replica never answers.
 * The response headers a call sets (a next page's Link) are those of the attempt whose answer is used.
 */
async function routed<R extends { ok: boolean }>(
  ctx: RequestContext,
  run: (servers: { db: Db; primary: Db; responseHeaders: Record<string, string> }) => Promise<R>,
): Promise<R> {
  const primary = ctx.db;
  const onPrimary = { db: primary, primary, responseHeaders: ctx.responseHeaders };
  const reads = ctx.reads;
  const replica = reads?.pick();
  if (!reads || !replica) return run(onPrimary);
  const headers: Record<string, string> = {};
  const unreachable = reads.whenUnreachable(replica);
  const attempt = run({ db: replica.db, primary, responseHeaders: headers });
  const result = await Promise.race([attempt, unreachable.then(() => undefined)]).finally(unreachable.cancel);
  if (result?.ok) Object.assign(ctx.responseHeaders, headers);
  if (result && (result.ok || ctx.signal.aborted)) return result;
  if (result) {
    const error = 'error' in result ? result.error : undefined;
    const failure = replicaFailureIn(error);
    if (!failure) {
      Object.assign(ctx.responseHeaders, headers);
      return result;
    }
    if (failure === 'lost') reads.lost(replica, error);
  }
  return run(onPrimary);
}

/** The caller's partner, once the key is accepted. */
export type PartnerScope = { partnerId: number; keyId: number; keyHash: string };

/**
 * Admits `calls` calls presented with one key: the key check (D-13) and the per-key limit
 * (D-14), once for them all. The REST door and createCaller admit one call each, inside the procedure;
 * the tRPC transport admits a whole batch before any of it runs (D-20), so a batch of n costs one key
 * check and counts n, or is refused whole. Refusals throw the partner error; the rate-limit headers (or
 * a guard's Retry-After) are put on `ctx.responseHeaders` either way.
 */
export async function admit(ctx: RequestContext, calls: number): Promise<PartnerScope> {
  const { keys, refused, policy, limiter } = ctx.rateLimit;
  const arrivedAt = keys.now();
  // Only HTTP's optional whitespace (space, tab) around the value is not part of the key.
  const presented = ctx.apiKey?.replace(/^[\t ]+|[\t ]+$/g, '');
  const keyHash = presented ? hashApiKey(presented) : undefined;
  const wellFormed = presented !== undefined && isWellFormedApiKey(presented);
  const now = ctx.now().getTime();
  const refusal = (key: ApiKeyState | undefined): PartnerErrorCode | undefined => {
    if (!key) return keyHash ? 'PARTNER_API_KEY_INVALID' : 'PARTNER_API_KEY_REQUIRED';
    if (key.revokedAt && key.revokedAt.getTime() <= now) return 'PARTNER_API_KEY_INACTIVE';
    if (key.expiresAt && key.expiresAt.getTime() <= now) return 'PARTNER_API_KEY_EXPIRED';
    if (!key.partnerActive) return 'PARTNER_API_FORBIDDEN';
    return undefined;
  };

  let key = keyHash && wellFormed ? await keys.known(keyHash) : undefined;
  if (refusal(key)) {
    // D-14: a call the directory does not hold as valid counts against its address first, atomically,
    // before any lookup; the lookup (a directory load after its arrival) is shared by every such call.
    const guard = await refused.limit(ctx.clientAddress);
    metrics()?.guardDecisions.inc({ decision: guard.success ? 'admitted' : 'refused' });
    if (keyHash && wellFormed && !key) key = await keys.reloaded(keyHash, arrivedAt);
    if (key) noteKey(ctx, key);
    const code = refusal(key);
    if (code && !guard.success) {
      ctx.responseHeaders['Retry-After'] = String(secondsUntil(guard.retryAt ?? guard.reset, now));
      throw new PartnerApiError('PARTNER_API_RATE_LIMITED', { cause: new Error('refused-key guard') });
    }
    if (code) throw new PartnerApiError(code);
    // A key issued since the last load: valid after all, so it takes nothing from the address's budget
    // and is never refused for what others sent from there (a refused guard counted nothing to give back).
    if (guard.success) await refused.refund(ctx.clientAddress);
  }
  if (!key || !keyHash) throw new PartnerApiError('PARTNER_API_INTERNAL_ERROR');
  noteKey(ctx, key);

  // Keyed on the key's hash, not its row id: unique across deployments that share one Redis.
  const decision = await limiter.limit(`key:${keyHash}`, calls);
  metrics()?.rateLimitDecisions.inc({ decision: decision.success ? 'admitted' : 'refused' });
  Object.assign(ctx.responseHeaders, rateLimitHeaders(policy, decision, ctx.now().getTime()));
  if (!decision.success) throw new PartnerApiError('PARTNER_API_RATE_LIMITED');
  return { partnerId: key.partnerId, keyId: key.keyId, keyHash };
}

/** D-22: who is calling, for the access line: the key's partner and its display prefix (D-4), never the key. */
function noteKey(ctx: RequestContext, key: ApiKeyState) {
  if (!ctx.access) return;
  ctx.access.partnerId = key.partnerId;
  ctx.access.keyPrefix = key.displayPrefix;
}

/**
 * A read of the key's partner: authenticated and rate limited (D-13, D-14), every call counted whatever
 * its outcome, a refused call not. A call whose transport admitted it already (a tRPC batch) uses that.
 * One middleware, in this order (each level of tRPC's middleware chain copies the call's context):
 * - D-22: the call's procedure names its request's operation (the first one, for the metrics and the
 *   access line; a batch is labelled by its transport), and is a span when tracing is on. Only procedures
 *   that exist get here, so the label's values are the router's names.
 * - D-20: the call runs under its request's signal (the client has gone, or the deadline passed). Its
 *   queries see the signal (db/cancellation.ts) and are cancelled with it; the call itself stops waiting
 *   at once and answers the 500 envelope, whatever a stalled store is doing.
 * - D-21: its statements run in the lane of the resource it reads (the router's first path segment:
 *   brands, users, shops, reviews, …), which may hold at most half the pool (db/pool-gate.ts). A call that
 *   got no connection in time answers the 500 envelope with `Retry-After`.
 * - then the key and the limit (admit).
 */
export const partnerProcedure = t.procedure.use(({ ctx, path, next }) => {
  if (ctx.access) ctx.access.operation ??= path;
  const admitted = async () => {
    const partner = await (ctx.admission ?? admit(ctx, 1));
    return routed(ctx, (servers) => next({ ctx: { partner, ...servers } }));
  };
  const bounded = async () => {
    let result: Awaited<ReturnType<typeof admitted>>;
    try {
      result = await untilAborted(ctx.signal, () => withStatementLane(path.split('.')[0] ?? path, admitted));
    } catch (error) {
      if (ctx.signal.aborted) throw new PartnerApiError('PARTNER_API_INTERNAL_ERROR', { cause: ctx.signal.reason });
      throw error;
    }
    const busy = result.ok ? undefined : poolBusyIn(result.error);
    if (busy) ctx.responseHeaders['Retry-After'] = String(busy.retryAfterSeconds);
    return result;
  };
  const traced = tracing();
  return traced ? traced.procedure(path, bounded) : bounded();
});

/** `{brand_code}` of every brand path. Any string: a malformed code is simply a missing brand (404). */
export const brandCodeParam = z.string().describe('Brand identifier, from GET /partner/v1/brands.');

/** Where a rule across parameters reports a broken rule; any issue makes the call 400. */
export type ParameterIssues = { addIssue(issue: { code: 'custom'; message: string; path: string[] }): void };

/** What a rule across parameters judges: the operation's parameters, parsed, with the path's brand_code. */
export type BrandParameters<Shape extends z.ZodRawShape> = z.output<z.ZodObject<Shape>> & { brand_code: string };

/** What a rule across parameters may depend on besides them: the request's KST "today" (D-5), for defaults. */
export type RequestDay = { today: string };

/**
 * A read inside one brand of the key's partner. The operation's parameters are validated first (400
 * before 404, D-13), then the brand is resolved in the partner's scope: a brand of another partner
 * answers exactly like a missing one (partner guide § Authentication).
 */
export function brandProcedure<Shape extends z.ZodRawShape>(
  parameters: Shape,
  /**
   * Rules across parameters (e.g. from ≤ to), judged after the others and before the brand, as 400. They
   * get the request's today, so a rule can apply to defaults that depend on the clock (the `to` of review statistics).
   */
  check?: (input: BrandParameters<Shape>, issues: ParameterIssues, request: RequestDay) => void,
) {
  const schema = z.object({ brand_code: brandCodeParam, ...parameters });
  return partnerProcedure.input(schema).use(async ({ ctx, input, next }) => {
    // The request's KST day, read once: the rules judge and the operation uses the same one (D-5).
    const today = kstToday(ctx.now());
    if (check) {
      const broken: string[] = [];
      const issues = { addIssue: (issue: { message: string }) => void broken.push(issue.message) };
      check(input as BrandParameters<Shape>, issues, { today });
      if (broken.length)
        throw new PartnerApiError('PARTNER_API_INVALID_PARAMETER', { cause: new Error(broken.join('; ')) });
    }
    const brand = await brandInScope(ctx, ctx.partner.partnerId, (input as { brand_code: string }).brand_code);
    if (!brand) throw new PartnerApiError('PARTNER_API_BRAND_NOT_FOUND');
    return next({ ctx: { brand, today } });
  });
}

/**
 * The brand a path names, only if it belongs to the partner: foreign and missing are the same (partner guide
 * § Authentication). From the brand directory (at most 1 s old, server/directory.ts): a name it does not hold waits
 * for a load that started after the call, so a brand added a moment ago is found; a code no brand can
 * have (db/schema/columns.ts) is missing at once.
 */
async function brandInScope(ctx: RequestContext, partnerId: number, brandCode: string) {
  if (!isPublicCode(brandCode)) return undefined;
  const arrivedAt = ctx.brands.now();
  const name = brandScopeName(partnerId, brandCode);
  return (await ctx.brands.known(name)) ?? (await ctx.brands.reloaded(name, arrivedAt));
}
