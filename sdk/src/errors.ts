import type { PartnerErrorCode } from './api.generated.js';

/**
 * Failures the SDK itself names, beside the API's codes: the server could not be reached (after the
 * retries), or it answered something that is not the API's envelope (e.g. a proxy's HTML error page).
 */
export type SdkErrorCode = 'PARTNER_SDK_NETWORK_ERROR' | 'PARTNER_SDK_INVALID_RESPONSE';

/** Every failed call rejects with this error. */
export class PartnerApiError extends Error {
  override readonly name = 'PartnerApiError';
  /** The API's error code (the error envelope's `status`), or one of the SDK's own. */
  readonly code: PartnerErrorCode | SdkErrorCode;
  /** The HTTP status of the last answer; 0 when no answer came. */
  readonly status: number;
  /** The `x-request-id` of the last answer: quote it when asking about a call. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait before calling again (`Retry-After` of a 429), if it said. */
  readonly retryAfter: number | undefined;

  constructor(
    message: string,
    details: {
      code: PartnerErrorCode | SdkErrorCode;
      status: number;
      requestId?: string | undefined;
      retryAfter?: number | undefined;
      cause?: unknown;
    },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code;
    this.status = details.status;
    this.requestId = details.requestId;
    this.retryAfter = details.retryAfter;
  }
}
