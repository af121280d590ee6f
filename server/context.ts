import type { Db } from '../db/client';
import type { Logger } from './logger';
import type { RateLimiter, RateLimitPolicy } from './ratelimit/limiter';
import type { MemorySlidingWindow } from './ratelimit/memory';
import type { RecentlyValidKeys } from './ratelimit/recent-keys';

/** What lives as long as the process: built once in main.ts (or a test) and shared by every request. */
export type Services = {
  db: Db;
  log: Logger;
  /** The clock; tests pin it. "Today" is derived from it in KST (D-5). */
  now: () => Date;
  rateLimit: {
    policy: RateLimitPolicy;
    limiter: RateLimiter;
    /** Refused key checks per client address (D-14); in process on purpose: it guards this instance's database. */
    refused: MemorySlidingWindow;
    /** Keys recently seen valid here: they pass the refused-call guard (D-14). */
    recentlyValid: RecentlyValidKeys;
  };
};

/** One request, whichever door it came through (REST, tRPC transport, createCaller). */
export type RequestContext = Services & {
  /** The raw x-partner-api-key header; never logged. */
  apiKey: string | undefined;
  clientAddress: string;
  requestId: string;
  /** Headers a middleware wants on the response (rate-limit fields); copied out by responseMeta. */
  responseHeaders: Record<string, string>;
};

export function createRequestContext(
  services: Services,
  request: { apiKey?: string | undefined; clientAddress?: string; requestId?: string },
): RequestContext {
  return {
    ...services,
    apiKey: request.apiKey,
    clientAddress: request.clientAddress ?? 'local',
    requestId: request.requestId ?? 'local',
    responseHeaders: {},
  };
}
