import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import { hashApiKey } from '../db/keys';
import { kstToday } from '../db/kst';
import { findApiKeyByHash } from '../db/queries/apiKeys';
import { findBrandInScope } from '../db/queries/brands';
import type { RequestContext } from './context';
import { errorEnvelope, PartnerApiError, type PartnerErrorCode, partnerCodeOf } from './errors';
import { rateLimitHeaders, secondsUntil } from './ratelimit/headers';

// 1. Initialisation. Every error leaves through this formatter: tRPC's shape stays (the SDK's client
// needs it) with the message replaced by the fixed text, no stack, and the partner envelope under `data`,
// which the REST door sends as the whole body (server/rest.ts).
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
        data: { code: shape.data.code, httpStatus: partner.status_code, path: shape.data.path, partner },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

// 2. Base procedures. The order of D-13 is the order of the chain: key (401/403), rate limit (429),
// parameters (400, the operation's .input), brand (404), then the operation's own resource (404).

/** Authenticates x-partner-api-key (spec §5, D-13) and narrows the context to the key's partner. */
const authenticate = t.middleware(async ({ ctx, next }) => {
  const { refused, recentlyValid } = ctx.rateLimit;
  const presented = ctx.apiKey?.trim();
  const keyHash = presented ? hashApiKey(presented) : undefined;
  // Refused calls are limited per client address before the database is asked, so key guessing is
  // bounded (D-14); a key recently seen valid here is let through, so a flood cannot lock it out.
  if (!(keyHash && recentlyValid.has(keyHash))) {
    const guard = await refused.peek(ctx.clientAddress);
    if (!guard.success) {
      ctx.responseHeaders['Retry-After'] = String(secondsUntil(guard.retryAt ?? guard.reset, ctx.now().getTime()));
      throw new PartnerApiError('PARTNER_API_RATE_LIMITED');
    }
  }
  const reject = async (code: PartnerErrorCode) => {
    // A key refused now (revoked, expired, partner off) no longer passes the guard as "recently valid".
    if (keyHash) recentlyValid.delete(keyHash);
    await refused.limit(ctx.clientAddress);
    return new PartnerApiError(code);
  };

  if (!keyHash) throw await reject('PARTNER_API_KEY_REQUIRED');
  const key = await findApiKeyByHash(ctx.db, keyHash);
  if (!key) throw await reject('PARTNER_API_KEY_INVALID');
  if (key.revokedAt && key.revokedAt.getTime() <= ctx.now().getTime()) throw await reject('PARTNER_API_KEY_INACTIVE');
  if (key.expiresAt && key.expiresAt.getTime() <= ctx.now().getTime()) throw await reject('PARTNER_API_KEY_EXPIRED');
  if (!key.partnerActive) throw await reject('PARTNER_API_FORBIDDEN');
  recentlyValid.add(keyHash);
  return next({ ctx: { partner: { partnerId: key.partnerId, keyId: key.keyId, keyHash } } });
});

/**
 * Counts every call that passed the key check, whatever its outcome (D-14), per key; a refused call is
 * not counted. The headers go on every answer to such a call, 429 included.
 */
const authenticatedProcedure = t.procedure.use(authenticate);
const rateLimited = authenticatedProcedure.use(async ({ ctx, next }) => {
  const { policy, limiter } = ctx.rateLimit;
  // Keyed on the key's hash, not its row id: unique across deployments that share one Redis.
  const decision = await limiter.limit(`key:${ctx.partner.keyHash}`);
  Object.assign(ctx.responseHeaders, rateLimitHeaders(policy, decision, ctx.now().getTime()));
  if (!decision.success) throw new PartnerApiError('PARTNER_API_RATE_LIMITED');
  return next();
});

/** A read of the key's partner: authenticated and rate limited. */
export const partnerProcedure = rateLimited;

/** `{brand_code}` of every brand path. Any string: a malformed code is simply a missing brand (404). */
export const brandCodeParam = z.string().describe('Brand identifier, from GET /partner/v1/brands.');

/** Where a rule across parameters reports a broken rule; any issue makes the call 400. */
export type ParameterIssues = { addIssue(issue: { code: 'custom'; message: string; path: string[] }): void };

/** What a rule across parameters may depend on besides them: the request's KST "today" (D-5), for defaults. */
export type RequestDay = { today: string };

/**
 * A read inside one brand of the key's partner. The operation's parameters are validated first (400
 * before 404, D-13), then the brand is resolved in the partner's scope: a brand of another partner
 * answers exactly like a missing one (spec §5.2).
 */
export function brandProcedure<Shape extends z.ZodRawShape>(
  parameters: Shape,
  /**
   * Rules across parameters (e.g. from ≤ to), judged after the others and before the brand, as 400. They
   * get the request's today, so a rule can apply to defaults that depend on the clock (spec §4.7 `to`).
   */
  check?: (input: z.output<z.ZodObject<Shape>>, issues: ParameterIssues, request: RequestDay) => void,
) {
  const schema = z.object({ brand_code: brandCodeParam, ...parameters });
  return partnerProcedure.input(schema).use(async ({ ctx, input, next }) => {
    // The request's KST day, read once: the rules judge and the operation uses the same one (D-5).
    const today = kstToday(ctx.now());
    if (check) {
      const broken: string[] = [];
      const issues = { addIssue: (issue: { message: string }) => void broken.push(issue.message) };
      check(input as z.output<z.ZodObject<Shape>>, issues, { today });
      if (broken.length)
        throw new PartnerApiError('PARTNER_API_INVALID_PARAMETER', { cause: new Error(broken.join('; ')) });
    }
    const brandCode = (input as { brand_code: string }).brand_code;
    const brand = await findBrandInScope(ctx.db, { partnerId: ctx.partner.partnerId, brandCode });
    if (!brand) throw new PartnerApiError('PARTNER_API_BRAND_NOT_FOUND');
    return next({ ctx: { brand, today } });
  });
}
