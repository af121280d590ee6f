import { type PartnerClient, type PartnerErrorCode, PROCEDURES } from './api.generated.js';
import { PartnerApiError } from './errors.js';
import { DEFAULT_RETRY_POLICY, isRetryableStatus, parseRetryAfter, type RetryPolicy, retryDelayMs } from './retry.js';

/** The part of `fetch` the client uses, so any implementation fits and no DOM or Node types are needed. */
export type FetchLike = (
  url: string,
  init: { method: 'GET'; headers: Record<string, string> },
) => Promise<ResponseLike>;

/** The part of a fetch `Response` the client reads. */
export type ResponseLike = {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
};

export type PartnerClientOptions = {
  /** Where the API is served, without `/partner/v1`: e.g. `https://partner-api.example.com`. */
  baseUrl: string;
  /** Your key, sent as `x-partner-api-key`. */
  apiKey: string;
  /** Retries after a 429, a 5xx or a network failure. Default 2; 0 turns retrying off. */
  retries?: number;
  /** The first backoff when the server names no wait; each further one doubles. Default 500 ms. */
  retryDelayMs?: number;
  /** The longest single wait. A `Retry-After` beyond it is not waited for: the 429 is thrown. Default 30 s. */
  maxRetryDelayMs?: number;
  /** A fetch implementation (tests, proxies, instrumentation). Default: the global `fetch`. */
  fetch?: FetchLike;
};

/** What one call answered: its `data`, and the cursor of the next page if the answer named one (D-19). */
export type CallResult = { data: unknown; nextCursor: string | undefined };

/** Where `paginate` finds a list call's full answer (its `data` alone lacks the `Link` header). */
export const CALL_RESULT: unique symbol = Symbol('@partner-reporting/sdk call result');

/**
 * A client for the Partner Reporting API over its tRPC transport (`GET /partner/v1/trpc/<path>`, D-18).
 * Each call sends one request (never a batch, so each has its own headers and rate-limit answer), resolves
 * to the envelope's `data`, and rejects with a `PartnerApiError`.
 */
export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  const call = transport(options);
  const client: Record<string, Record<string, unknown>> = {};
  for (const path of PROCEDURES) {
    const [namespace, name] = path.split('.') as [string, string];
    const method = async (input?: unknown) => (await call(path, input)).data;
    Object.defineProperty(method, CALL_RESULT, { value: (input?: unknown) => call(path, input) });
    client[namespace] = { ...client[namespace], [name]: method };
  }
  return client as unknown as PartnerClient;
}

function transport(options: PartnerClientOptions) {
  const { apiKey } = options;
  if (typeof apiKey !== 'string' || apiKey.trim() === '')
    throw new TypeError('createPartnerClient: apiKey is required');
  const endpoint = `${new URL(options.baseUrl).href.replace(/\/+$/, '')}/partner/v1/trpc`;
  const retries = options.retries ?? DEFAULT_RETRY_POLICY.retries;
  if (!Number.isInteger(retries) || retries < 0)
    throw new TypeError('createPartnerClient: retries must be an integer ≥ 0');
  const policy: RetryPolicy = {
    retries,
    baseDelayMs: options.retryDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
    maxDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
  };
  const fetchImpl: FetchLike = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  const headers = { 'x-partner-api-key': apiKey, accept: 'application/json' };

  return async function call(path: string, input: unknown): Promise<CallResult> {
    // tRPC's HTTP protocol for a query: the input as JSON in `input` (https://trpc.io/docs/rpc).
    const url = `${endpoint}/${path}?input=${encodeURIComponent(JSON.stringify(input ?? {}))}`;
    for (let attempt = 0; ; attempt++) {
      const answer = await fetchImpl(url, { method: 'GET', headers }).then(read, (error: unknown) =>
        unreachable(error),
      );
      if (!(answer instanceof PartnerApiError)) return answer;
      if (!isRetryableStatus(answer.status)) throw answer;
      const wait = retryDelayMs(policy, attempt, answer.retryAfter);
      if (wait === undefined) throw answer;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
}

function unreachable(cause: unknown) {
  return new PartnerApiError('The API could not be reached.', { code: 'PARTNER_SDK_NETWORK_ERROR', status: 0, cause });
}

/** A tRPC answer as the client reads it: `{result: {data: envelope}}` or `{error: {message, data: {partner}}}`. */
async function read(response: ResponseLike): Promise<CallResult | PartnerApiError> {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    return unreachable(error);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const envelope = field(field(body, 'result'), 'data');
  if (response.status === 200 && field(envelope, 'status') === 'SUCCESS') {
    return { data: field(envelope, 'data'), nextCursor: nextCursorOf(response.headers.get('link')) };
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
    const message = field(error, 'message');
    return new PartnerApiError(typeof message === 'string' ? message : code, {
      ...details,
      code: code as PartnerErrorCode,
    });
  }
  return new PartnerApiError(`The API answered ${response.status} without its envelope.`, {
    ...details,
    code: 'PARTNER_SDK_INVALID_RESPONSE',
  });
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
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
