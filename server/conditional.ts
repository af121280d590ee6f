import { createHash } from 'node:crypto';
import { rateLimitHeaders } from './ratelimit/sliding-window';
import type { RequestContext } from './services';
import type { PartnerScope } from './trpc';

// Conditional requests (D-27): a weak ETag on every 200 of a single call over HTTP, and a 304 without a
// body when the request's If-None-Match matches it; a 304 gives its call's unit of the limit back.

/** A single call over HTTP (REST, or one call on the tRPC transport): its If-None-Match, and its verdict. */
export type Conditional = {
  ifNoneMatch: string | undefined;
  /** Set once the answer matched: each transport turns it into its 304 (server/app.ts). */
  notModified: boolean;
};

/**
 * The weak ETag of an answer to a partner: a hash of the partner and the answer's JSON, nothing of the
 * server, so a replica and the primary tag equal answers alike, and two partners never share a tag.
 */
export function entityTag(partnerId: number, answer: unknown): string {
  // UTF-16 code units as they are: exact, and no UTF-8 encoding pass over a page of Korean text.
  const digest = createHash('sha256')
    .update(`${partnerId}:`, 'utf16le')
    .update(JSON.stringify(answer), 'utf16le')
    .digest('base64url');
  return `W/"${digest.slice(0, 22)}"`;
}

/** RFC 9110 §13.1.2: `*`, or a list of tags of which one is `tag` by weak comparison (W/ on either side). */
export function matches(ifNoneMatch: string | undefined, tag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = tag.replace(/^W\//, '');
  return ifNoneMatch.match(/"[^"]*"/g)?.includes(opaque) ?? false;
}

/**
 * After a single call's answer: its ETag and `Cache-Control: private` (the key travels in a header shared
 * caches do not know). When If-None-Match matches, the answer is a 304 and the call's unit goes back to the
 * key's budget while the key's 304s of the minute are within theirs, so RateLimit-Remaining shows it back.
 */
export async function answerConditionally(ctx: RequestContext, partner: PartnerScope, answer: unknown) {
  const conditional = ctx.conditional;
  // A call its deadline or client already ended has answered 500 (D-20): there is nothing to tag.
  if (!conditional || ctx.signal.aborted) return;
  const tag = entityTag(partner.partnerId, answer);
  const notModified = matches(conditional.ifNoneMatch, tag);
  const { policy, limiter } = ctx.rateLimit;
  const { identifier, decision } = partner.counted;
  let remaining = decision.remaining;
  if (notModified && limiter.refund && (await ctx.rateLimit.notModified.limit(`not-modified:${identifier}`)).success) {
    await limiter.refund(identifier, 1, decision);
    remaining = Math.min(decision.limit, remaining + 1);
  }
  // Set only now, with nothing left to wait for, so an answer that failed meanwhile carries no ETag.
  if (ctx.signal.aborted) return;
  if (remaining !== decision.remaining) {
    const refunded = { success: true, limit: decision.limit, remaining, reset: decision.reset };
    Object.assign(ctx.responseHeaders, rateLimitHeaders(policy, refunded, ctx.now().getTime()));
  }
  ctx.responseHeaders.ETag = tag;
  ctx.responseHeaders['Cache-Control'] = 'private';
  conditional.notModified = notModified;
}
