import { FEEDS, PARAMETERS, type PartnerClient, type PartnerErrorCode, PROCEDURES } from './api.generated.js';
import { apiPromise } from './api-promise.js';
import { type CachedAnswer, type ConditionalCache, cacheKey, LruCache } from './cache.js';
import { CursorExpiredError, PartnerAbortError, PartnerApiError } from './errors.js';
import { changeFeed } from './feed.js';
import type {
  AbortSignalLike,
  APIPromise,
  FeedPage,
  RateLimit,
  RequestOptions,
  RuntimeAbortSignal,
  WithResponse,
} from './request.js';
import { DEFAULT_RETRY_POLICY, isRetryableStatus, parseRetryAfter, type RetryPolicy, retryDelayMs } from './retry.js';
import { SDK_VERSION } from './version.js';

/** The part of `fetch` the client uses, so any implementation fits and no DOM or Node types are needed. */
export type FetchLike = (
  url: string,
  init: { method: 'GET'; headers: Record<string, string>; signal: RuntimeAbortSignal },
) => Promise<ResponseLike>;

/** The part of a fetch `Response` the client reads. */
export type ResponseLike = {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
};

/** What `onRequest` is told before each attempt. The key is left out, so the hook may log it all. */
export type RequestEvent = { procedure: string; url: string; attempt: number; requestId: string | undefined };

/** What `onResponse` is told after each attempt, answered or failed. */
export type ResponseEvent = {
  procedure: string;
  url: string;
  attempt: number;
  /** The HTTP status; 0 when no answer came (network failure, timeout, abort). */
  status: number;
  requestId: string | undefined;
  durationMs: number;
  /** The attempt's failure, if it failed; a retry may still follow. */
  error: PartnerApiError | undefined;
};

export type PartnerClientOptions = {
  /** Where the API is served: e.g. `https://partner-api.example.com` (a trailing `/partner/v1` is accepted). */
  baseUrl: string;
  /** Your key, sent as `x-partner-api-key`. */
  apiKey: string;
  /** Retries after a 429, a 5xx, a network failure or a timeout. Default 2; 0 turns retrying off. */
  retries?: number | undefined;
  /** The first backoff when the server names no wait; each further one doubles. Default 500 ms. */
  retryDelayMs?: number | undefined;
  /** The longest single wait. A `Retry-After` beyond it is not waited for: the 429 is thrown. Default 30 s. */
  maxRetryDelayMs?: number | undefined;
  /** The longest one attempt may take, in ms, before it fails with `PARTNER_SDK_TIMEOUT`. Default 30 s. */
  timeoutMs?: number | undefined;
  /** A fetch implementation (tests, proxies, instrumentation). Default: the global `fetch`. */
  fetch?: FetchLike | undefined;
  /** Called before each attempt (debugging, logs). An exception it throws fails the call. */
  onRequest?: ((event: RequestEvent) => void) | undefined;
  /** Called after each attempt (debugging, logs, metrics). An exception it throws fails the call. */
  onResponse?: ((event: ResponseEvent) => void) | undefined;
  /**
   * Conditional requests: `true` keeps the last ETag and answer of the latest 500 requests in memory (an
   * `LruCache`), or pass your own `ConditionalCache`. A repeated call then sends `If-None-Match`, and a 304
   * resolves to the kept answer as a 200 would. Default: off.
   */
  cache?: boolean | ConditionalCache | undefined;
};

/** One call's answer, as `withResponse` gives it. */
type CallResult = WithResponse<unknown>;

/** An attempt's answer: the call's result, its status (200, or 304 answered from the cache) and ETag. */
type Answered = { result: CallResult; status: number; etag: string | undefined; body: string };

export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * A client for the Partner Reporting API over its tRPC transport (`GET /partner/v1/trpc/<path>`, D-18).
 * Each call sends one request (never a batch, so each has its own headers and rate-limit answer), resolves
 * to the envelope's `data`, and rejects with a `PartnerApiError`. A feed's call (`FEEDS`) is instead a
 * `ChangeFeed`, each of whose pages is such a call, at the cursor the feed has reached.
 */
export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  const call = transport(options);
  const feeds: readonly string[] = FEEDS;
  const client: Record<string, Record<string, unknown>> = {};
  for (const path of PROCEDURES) {
    const [namespace, name] = path.split('.') as [string, string];
    const single = (input?: unknown, request?: RequestOptions) => apiPromise(call(path, input, request ?? {}));
    client[namespace] = { ...client[namespace], [name]: feeds.includes(path) ? feedOf(single) : single };
  }
  return client as unknown as PartnerClient;
}

/** A feed's method: each of its pages is the single call, at the cursor the feed has reached. */
function feedOf(single: (input?: unknown, request?: RequestOptions) => APIPromise<unknown>) {
  return (input?: unknown, request?: RequestOptions) => {
    const start = field(input, 'cursor');
    return changeFeed(
      (cursor) =>
        single(cursor === undefined ? input : { ...(input as object), cursor }, request) as APIPromise<FeedPage>,
      typeof start === 'string' ? start : undefined,
    );
  };
}

/** The API's origin and path prefix, whether or not `baseUrl` already ends in `/partner/v1`. */
export function endpointOf(baseUrl: string): string {
  const base = new URL(baseUrl).href.replace(/\/+$/, '').replace(/\/partner\/v1(\/trpc)?$/, '');
  return `${base}/partner/v1/trpc`;
}

function positive(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a number of ms > 0`);
  return value;
}

function transport(options: PartnerClientOptions) {
  const { apiKey, onRequest, onResponse } = options;
  if (typeof apiKey !== 'string' || apiKey.trim() === '')
    throw new TypeError('createPartnerClient: apiKey is required');
  const endpoint = endpointOf(options.baseUrl);
  const retries = options.retries ?? DEFAULT_RETRY_POLICY.retries;
  if (!Number.isInteger(retries) || retries < 0)
    throw new TypeError('createPartnerClient: retries must be an integer ≥ 0');
  const policy: RetryPolicy = {
    retries,
    baseDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
    maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
  };
  const clientTimeout = positive(options.timeoutMs, 'createPartnerClient: timeoutMs', DEFAULT_TIMEOUT_MS);
  const fetchImpl: FetchLike =
    options.fetch ?? ((url, init) => globalThis.fetch(url, init as RequestInit) as Promise<ResponseLike>);
  const cache = options.cache === true ? new LruCache() : options.cache || undefined;
  const baseHeaders = {
    'x-partner-api-key': apiKey,
    accept: 'application/json',
    'user-agent': `partner-reporting-sdk/${SDK_VERSION}`,
  };

  return async function call(path: string, input: unknown, request: RequestOptions): Promise<CallResult> {
    const parameters = checkedParameters(path, input, request.extraParams);
    const timeoutMs = positive(request.timeoutMs, `${path}: timeoutMs`, clientTimeout);
    const { signal, requestId } = request;
    // tRPC's HTTP protocol for a query: the input as JSON in `input` (https://trpc.io/docs/rpc).
    const url = `${endpoint}/${path}?input=${encodeURIComponent(JSON.stringify(parameters))}`;
    const key = cache && cacheKey(apiKey, url);
    const cached = key === undefined ? undefined : cache?.get(key);
    const headers: Record<string, string> = { ...baseHeaders };
    if (requestId !== undefined) headers['x-request-id'] = requestId;
    if (cached) headers['if-none-match'] = cached.etag;
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new PartnerAbortError(signal.reason);
      onRequest?.({ procedure: path, url, attempt, requestId });
      const started = Date.now();
      const answer = await attemptOnce(fetchImpl, url, headers, signal, timeoutMs, cached);
      const failure = answer instanceof PartnerApiError ? answer : undefined;
      onResponse?.({
        procedure: path,
        url,
        attempt,
        status: failure ? failure.status : (answer as Answered).status,
        requestId: failure ? failure.requestId : (answer as Answered).result.requestId,
        durationMs: Date.now() - started,
        error: failure,
      });
      if (!failure) {
        const { result, status, etag, body } = answer as Answered;
        if (key !== undefined && status === 200 && etag !== undefined) {
          cache?.set(key, { etag, body, nextCursor: result.nextCursor });
        }
        return result;
      }
      if (failure instanceof PartnerAbortError || !isRetryableStatus(failure.status)) throw failure;
      const wait = retryDelayMs(policy, attempt, failure.retryAfter);
      if (wait === undefined) throw failure;
      await sleep(wait, signal);
    }
  };
}

/**
 * The parameters as sent: the caller's, refused if one is not the method's (the server ignores unknown
 * parameters, D-11, so a misspelled filter would silently match everything), then `extraParams`.
 */
function checkedParameters(path: string, input: unknown, extra: RequestOptions['extraParams']) {
  if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input)))
    throw new TypeError(`${path}: the parameters must be an object`);
  const known: readonly string[] = PARAMETERS[path as keyof typeof PARAMETERS];
  const unknown = Object.keys(input ?? {}).filter((name) => !known.includes(name));
  if (unknown.length) {
    throw new TypeError(
      `${path}: unknown parameter ${unknown.map((name) => `"${name}"`).join(', ')}; it takes ${known.join(', ')}. ` +
        'A parameter newer than this SDK goes in the options: { extraParams: { name: value } }.',
    );
  }
  return { ...(input as object | undefined), ...extra };
}

/**
 * One request and its answer read, settled at the first of: the answer, the timeout (a retryable failure),
 * the caller's abort (final). The request is aborted in both other cases, so its socket is freed.
 */
function attemptOnce(
  fetchImpl: FetchLike,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignalLike | undefined,
  timeoutMs: number,
  cached: CachedAnswer | undefined,
): Promise<Answered | PartnerApiError> {
  const controller = new AbortController();
  return new Promise<Answered | PartnerApiError>((resolve, reject) => {
    const onAbort = () => {
      controller.abort(signal?.reason);
      reject(new PartnerAbortError(signal?.reason));
    };
    const timer = setTimeout(() => {
      controller.abort();
      resolve(new PartnerApiError(`No answer within ${timeoutMs} ms.`, { code: 'PARTNER_SDK_TIMEOUT', status: 0 }));
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    new Promise<ResponseLike>((start) =>
      start(fetchImpl(url, { method: 'GET', headers, signal: controller.signal as RuntimeAbortSignal })),
    )
      .then((response) => read(response, cached), unreachable)
      .then(resolve, reject)
      .finally(done);
  });
}

/** A retry wait that an abort ends at once. */
function sleep(ms: number, signal: AbortSignalLike | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new PartnerAbortError(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function unreachable(cause: unknown) {
  return new PartnerApiError('The API could not be reached.', { code: 'PARTNER_SDK_NETWORK_ERROR', status: 0, cause });
}

/**
 * A tRPC answer as the client reads it: `{result: {data: envelope}}` or `{error: {message, data: {partner}}}`.
 * A 304 answers the `If-None-Match` sent from `cached`: the kept body is read in place of the absent one, and
 * the 304's own headers (request id, rate limit) are reported.
 */
async function read(response: ResponseLike, cached: CachedAnswer | undefined): Promise<Answered | PartnerApiError> {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    return unreachable(error);
  }
  const notModified = response.status === 304 && cached !== undefined;
  if (notModified) text = cached.body;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const envelope = field(field(body, 'result'), 'data');
  if ((response.status === 200 || notModified) && field(envelope, 'status') === 'SUCCESS') {
    const result = {
      data: field(envelope, 'data'),
      requestId,
      rateLimit: rateLimitOf(response.headers),
      nextCursor: notModified ? cached.nextCursor : nextCursorOf(response.headers.get('link')),
    };
    return { result, status: response.status, etag: response.headers.get('etag') ?? undefined, body: text };
  }
  const error = field(body, 'error');
  const partner = field(field(error, 'data'), 'partner');
  const code = field(partner, 'status');
  const details = {
    status: response.status,
    requestId,
    retryAfter: parseRetryAfter(response.headers.get('retry-after')),
  };
  if (typeof code === 'string' && code.startsWith('PARTNER_API_')) {
    const message = field(partner, 'message') ?? field(error, 'message');
    const description = typeof message === 'string' ? message : code;
    if (code === 'PARTNER_API_CURSOR_EXPIRED') return new CursorExpiredError(description, details);
    return new PartnerApiError(description, { ...details, code: code as PartnerErrorCode });
  }
  const hint = response.status === 404 ? ' Is baseUrl the address of the API (scheme, host, port and any prefix)?' : '';
  return new PartnerApiError(`The API answered without its envelope.${hint}`, {
    ...details,
    code: 'PARTNER_SDK_INVALID_RESPONSE',
  });
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** The `RateLimit-*` headers (D-14), if the answer carried all three. */
function rateLimitOf(headers: ResponseLike['headers']): RateLimit | undefined {
  const [limit, remaining, resetSeconds] = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((name) => {
    const value = headers.get(name);
    return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
  });
  if (limit === undefined || remaining === undefined || resetSeconds === undefined) return undefined;
  return { limit, remaining, resetSeconds };
}

/**
 * The `cursor` parameter of the `Link` header's rel="next" URL (RFC 8288; D-19), if there is one. Only the
 * cursor is taken: the next call keeps its own filters, which the cursor was made under.
 */
export function nextCursorOf(link: string | null): string | undefined {
  if (!link) return undefined;
  for (const value of link.split(/,\s*(?=<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(value);
    if (!match) continue;
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? '');
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (!relations.includes('next')) continue;
    const cursor = new URL(match[1] ?? '', 'http://link.invalid').searchParams.get('cursor');
    if (cursor) return cursor;
  }
  return undefined;
}
