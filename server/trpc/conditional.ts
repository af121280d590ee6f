import { createHash } from 'node:crypto';
import type { PartnerScope, RequestContext } from './context';
import { rateLimitHeaders } from './ratelimit/sliding-window';

// Conditional requests (D-27): a weak ETag on a single call's 200, and a 304 that gives its unit back.

/** A weak ETag of the partner and the answer's JSON only, so every server tags equal answers alike. */
function entityTag(partnerId: number, answer: unknown): string {
  // UTF-16 code units as they are: no UTF-8 encoding pass over a page of Korean text.
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

/** A single call's ETag and `Cache-Control: private`; a 304 gives its unit back within the 304 budget. */
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
