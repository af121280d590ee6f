import type { Db } from '../db/client';
import type { PoolSlots } from '../db/pool-slots';
import type { ApiKeyState } from '../db/queries/apiKeys';
import type { BrandEntry } from '../db/queries/brands';
import type { Replicas } from '../db/replicas';
import type { AccessRecord } from './access-log';
import type { Directory } from './directory';
import type { Logger } from './logger';
import type { RateLimiter, RateLimitPolicy } from './ratelimit/limiter';
import type { MemorySlidingWindow } from './ratelimit/memory';
import type { PartnerScope } from './trpc';

/** What lives as long as the process: built once in main.ts (or a test) and shared by every request. */
export type Services = {
  db: Db;
  /**
   * D-21: a client of the same database that never queues behind request statements (its own
   * connections): the key and brand directories load through it and /readyz asks it.
   */
  control: Db;
  /** D-21: the slots of `db`'s request pool, one held by each call while it reads (postgres.js only). */
  slots?: PoolSlots | undefined;
  /** D-23: the read replicas a call reads from when one is usable; unset, every read is on `db`. */
  replicas?: Replicas | undefined;
  log: Logger;
  /** The clock; tests pin it. "Today" is derived from it in KST (D-5). */
  now: () => Date;
  rateLimit: {
    policy: RateLimitPolicy;
    limiter: RateLimiter;
    /** Refused key checks per client address (D-14); in process on purpose: it guards this instance's database. */
    refused: MemorySlidingWindow;
    /** Every key's state by its hash, at most 1 s old (server/directory.ts). */
    keys: Directory<ApiKeyState>;
  };
  /** Every brand under its partner (db/queries/brands.ts brandScopeName), at most 1 s old. */
  brands: Directory<BrandEntry>;
};

/** One request, whichever door it came through (REST, tRPC transport, createCaller). */
export type RequestContext = Services & {
  /** The raw x-partner-api-key header; never logged. */
  apiKey: string | undefined;
  clientAddress: string;
  requestId: string;
  /** Aborted when the client has gone or the request's deadline passed (D-20); the call then answers 500. */
  signal: AbortSignal;
  /** The key check and limit already made for every call of the request (a tRPC batch, D-20). */
  admission?: Promise<PartnerScope>;
  /** Headers a middleware wants on the response (rate-limit fields); copied out by responseMeta. */
  responseHeaders: Record<string, string>;
  /** What the request's access line reports (HTTP doors only): operation, partner, key prefix (D-22). */
  access?: AccessRecord | undefined;
};

export function createRequestContext(
  services: Services,
  request: {
    apiKey?: string | undefined;
    clientAddress?: string;
    requestId?: string;
    signal?: AbortSignal;
    access?: AccessRecord | undefined;
  },
): RequestContext {
  return {
    ...services,
    apiKey: request.apiKey,
    clientAddress: request.clientAddress ?? 'local',
    requestId: request.requestId ?? 'local',
    signal: request.signal ?? new AbortController().signal,
    responseHeaders: {},
    access: request.access,
  };
}
