import type { RateLimitDecision } from './ratelimit/sliding-window';
import type { Services } from './services';

// What one request carries through the layers, whichever door it came in by: types only, and the one
// function that makes a context from the process's services. It imports nothing that imports it.

/** One request, whichever way it came (REST, tRPC transport, createCaller). */
export type RequestContext = Services & {
  /** The raw x-partner-api-key header; never logged. */
  apiKey: string | undefined;
  clientAddress: string;
  requestId: string;
  /** Aborted when the client has gone or the request's deadline passed (D-20); the call then answers 500. */
  signal: AbortSignal;
  /** The key check and limit already made for every call of the request (a tRPC batch, D-20). */
  authenticated?: Promise<PartnerScope>;
  /** Headers a middleware wants on the response (rate-limit fields); copied out by responseMeta. */
  responseHeaders: Record<string, string>;
  /** A single call over HTTP, which may answer 304 (D-27); unset for a tRPC batch and createCaller. */
  conditional?: Conditional | undefined;
  /** What the request's access line reports (HTTP only, D-22). */
  access?: AccessRecord | undefined;
};

export function createRequestContext(
  services: Services,
  request: Partial<Pick<RequestContext, 'apiKey' | 'clientAddress' | 'requestId' | 'signal' | 'access'>>,
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

/** The caller's partner, once the key is accepted, and the limit's decision that counted its call(s). */
export type PartnerScope = {
  partnerId: number;
  keyId: number;
  keyHash: string;
  counted: { identifier: string; decision: RateLimitDecision };
};

/** What a request's access line says beyond the response (D-22), filled in while it runs; never the key. */
export type AccessRecord = {
  traceId: string;
  client: string | undefined;
  /** The procedure (`reviews.list`), `trpc.batch`, or a route label (routeLabel): bounded cardinality. */
  operation?: string;
  partnerId?: number;
  keyPrefix?: string;
  code?: string;
  cause?: unknown;
};

/** A single call over HTTP (REST, or one call on the tRPC transport): its If-None-Match, and its verdict. */
export type Conditional = {
  ifNoneMatch: string | undefined;
  /** Set once the answer matched: each transport turns it into its 304 (server/http/app.ts). */
  notModified: boolean;
};
