import type { PartnerErrorCode } from './api.generated.js';

/**
 * Failures the SDK itself names, beside the API's codes: the server could not be reached (after the
 * retries), an attempt outlived `timeoutMs`, the caller aborted the call, or the server answered something
 * that is not the API's envelope (e.g. a proxy's HTML error page).
 */
export type SdkErrorCode =
  | 'PARTNER_SDK_NETWORK_ERROR'
  | 'PARTNER_SDK_TIMEOUT'
  | 'PARTNER_SDK_ABORTED'
  | 'PARTNER_SDK_INVALID_RESPONSE';

/** What a `PartnerApiError` is made from. */
export type PartnerApiErrorDetails = {
  code: PartnerErrorCode | SdkErrorCode;
  status: number;
  requestId?: string | undefined;
  retryAfter?: number | undefined;
  cause?: unknown;
};

/**
 * Every failed call rejects with this error. Its `message` starts with the code and ends with the request
 * id, so a log line or `String(error)` is enough to ask about a call.
 */
export class PartnerApiError extends Error {
  override name = 'PartnerApiError';
  /** The API's error code (the error envelope's `status`), or one of the SDK's own. */
  readonly code: PartnerErrorCode | SdkErrorCode;
  /** The HTTP status of the last answer; 0 when no answer came. */
  readonly status: number;
  /** The `x-request-id` of the last answer: quote it when asking about a call. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait before calling again (`Retry-After` of a 429), if it said. */
  readonly retryAfter: number | undefined;

  constructor(description: string, details: PartnerApiErrorDetails) {
    const status = details.status === 0 ? 'no answer' : `HTTP ${details.status}`;
    const request = details.requestId === undefined ? '' : ` (request id ${details.requestId})`;
    super(
      `${details.code} (${status}): ${description}${request}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.code = details.code;
    this.status = details.status;
    this.requestId = details.requestId;
    this.retryAfter = details.retryAfter;
  }
}

/**
 * The caller aborted the call through its `signal`, during a request or a retry wait. Its `name` is
 * `AbortError`, as with `fetch`, so `error.name === 'AbortError'` checks keep working; `cause` is the
 * signal's reason. It is never retried.
 */
export class PartnerAbortError extends PartnerApiError {
  override name = 'AbortError';

  constructor(reason: unknown) {
    super('The call was aborted by its signal.', { code: 'PARTNER_SDK_ABORTED', status: 0, cause: reason });
  }
}

/**
 * A feed's cursor can no longer be served (410 `PARTNER_API_CURSOR_EXPIRED`: older than the feed keeps
 * changes, or issued before the brand's dissatisfaction range changed; partner guide § Keeping a copy in
 * sync). Start again without a cursor: a full walk, after which what it did not hand out is gone. Never
 * retried.
 */
export class CursorExpiredError extends PartnerApiError {
  override name = 'CursorExpiredError';
  declare readonly code: 'PARTNER_API_CURSOR_EXPIRED';

  constructor(description: string, details: Omit<PartnerApiErrorDetails, 'code'>) {
    super(description, { ...details, code: 'PARTNER_API_CURSOR_EXPIRED' });
  }
}
