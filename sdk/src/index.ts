export type {
  PartnerApiInputs,
  PartnerApiOutputs,
  PartnerClient,
  PartnerErrorCode,
  WebhookEvent,
} from './api.generated.js';
export { type CachedAnswer, type ConditionalCache, DEFAULT_CACHE_ENTRIES, LruCache } from './cache.js';
export {
  createPartnerClient,
  DEFAULT_TIMEOUT_MS,
  type FetchLike,
  type PartnerClientOptions,
  type RequestEvent,
  type ResponseEvent,
  type ResponseLike,
} from './client.js';
export {
  CursorExpiredError,
  PartnerAbortError,
  PartnerApiError,
  type PartnerApiErrorDetails,
  type SdkErrorCode,
} from './errors.js';
export { type ItemOf, type ListCall, type Page, type PaginateOptions, type ParamsOf, paginate } from './paginate.js';
export type {
  AbortSignalLike,
  APIPromise,
  ChangeFeed,
  FeedPage,
  NarrowedPage,
  RateLimit,
  RequestOptions,
  RuntimeAbortSignal,
  WithResponse,
} from './request.js';
export type * from './types.js';
export { SDK_VERSION } from './version.js';
export { verifyWebhook, type WebhookHeaders, WebhookVerificationError } from './webhooks.js';
