export type { PartnerApiInputs, PartnerApiOutputs, PartnerClient, PartnerErrorCode } from './api.generated.js';
export { createPartnerClient, type FetchLike, type PartnerClientOptions, type ResponseLike } from './client.js';
export { PartnerApiError, type SdkErrorCode } from './errors.js';
export { type ItemOf, type ListCall, type Page, paginate } from './paginate.js';
