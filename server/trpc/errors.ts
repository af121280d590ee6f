import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { causeChain } from '../../db/failure';

/** Every error code (partner guide § Errors, D-12) and the access log's default reason (D-22, never sent). */
export const ERROR_CATALOGUE = {
  PARTNER_API_INVALID_PARAMETER: { httpStatus: 400, trpcCode: 'BAD_REQUEST', reason: 'a parameter broke its rule' },
  PARTNER_API_KEY_REQUIRED: { httpStatus: 401, trpcCode: 'UNAUTHORIZED', reason: 'no x-partner-api-key header' },
  PARTNER_API_KEY_INVALID: {
    httpStatus: 401,
    trpcCode: 'UNAUTHORIZED',
    reason: 'the key is not one the service issued',
  },
  PARTNER_API_KEY_INACTIVE: { httpStatus: 401, trpcCode: 'UNAUTHORIZED', reason: 'the key was revoked' },
  PARTNER_API_KEY_EXPIRED: { httpStatus: 401, trpcCode: 'UNAUTHORIZED', reason: 'the key has expired' },
  PARTNER_API_FORBIDDEN: { httpStatus: 403, trpcCode: 'FORBIDDEN', reason: "the key's partner is deactivated" },
  PARTNER_API_BRAND_NOT_FOUND: { httpStatus: 404, trpcCode: 'NOT_FOUND', reason: "no such brand in the key's partner" },
  PARTNER_API_REVIEW_NOT_FOUND: { httpStatus: 404, trpcCode: 'NOT_FOUND', reason: 'no such review in the brand' },
  PARTNER_API_USER_NOT_FOUND: { httpStatus: 404, trpcCode: 'NOT_FOUND', reason: 'no such user in the brand' },
  PARTNER_API_NOT_FOUND: {
    httpStatus: 404,
    trpcCode: 'NOT_FOUND',
    reason: "no such path, procedure or method, or no such webhook of the key's partner",
  },
  PARTNER_API_CURSOR_EXPIRED: {
    httpStatus: 410,
    trpcCode: 'PRECONDITION_FAILED',
    reason: 'the change feed cursor can no longer be served',
  },
  PARTNER_API_RATE_LIMITED: {
    httpStatus: 429,
    trpcCode: 'TOO_MANY_REQUESTS',
    reason: "the key's calls of the minute are spent",
  },
  PARTNER_API_INTERNAL_ERROR: { httpStatus: 500, trpcCode: 'INTERNAL_SERVER_ERROR', reason: 'an internal error' },
} as const satisfies Record<string, { httpStatus: number; trpcCode: TRPC_ERROR_CODE_KEY; reason: string }>;

export type PartnerErrorCode = keyof typeof ERROR_CATALOGUE;

/** When each code is answered (D-11..D-14): the partner guide's words, shorter (the OpenAPI document's). */
export const ERROR_DESCRIPTIONS = {
  PARTNER_API_INVALID_PARAMETER:
    'A query parameter is malformed, out of range, given twice, or breaks a rule across parameters.',
  PARTNER_API_KEY_REQUIRED: 'The x-partner-api-key header is missing or empty.',
  PARTNER_API_KEY_INVALID: 'The key is not registered.',
  PARTNER_API_KEY_INACTIVE: 'The key was revoked.',
  PARTNER_API_KEY_EXPIRED: 'The key has expired.',
  PARTNER_API_FORBIDDEN: 'The key is valid but its partner is deactivated.',
  PARTNER_API_BRAND_NOT_FOUND: 'The brand_code does not exist or belongs to another partner (indistinguishable).',
  PARTNER_API_REVIEW_NOT_FOUND: 'The review_id does not exist or is not of this brand.',
  PARTNER_API_USER_NOT_FOUND: 'The user_code does not exist or is not of this brand.',
  PARTNER_API_NOT_FOUND:
    'The path is not exactly a path of this API, or the method is not GET (with or without a key), or the webhook_id does not exist or is not yours (indistinguishable).',
  PARTNER_API_CURSOR_EXPIRED:
    'The review change cursor can no longer be served (older than the retention, or issued before a change of the dissatisfaction range): start again without cursor.',
  PARTNER_API_RATE_LIMITED: 'Too many calls: wait Retry-After seconds before the next one.',
  PARTNER_API_INTERNAL_ERROR: 'An unforeseen failure; quote the x-request-id header when reporting it.',
} satisfies Record<PartnerErrorCode, string>;

/** The one fixed text of every error (partner guide § Responses, D-12). */
export const ERROR_MESSAGE = 'The request cannot be processed.';

/** The error body of partner guide § Errors: exactly these three fields. */
export function errorEnvelope(code: PartnerErrorCode) {
  return { status: code, status_code: ERROR_CATALOGUE[code].httpStatus, message: ERROR_MESSAGE };
}

/** A TRPCError that knows its partner code, so REST, the tRPC transport and createCaller map it alike. */
export class PartnerApiError extends TRPCError {
  readonly partnerCode: PartnerErrorCode;
  constructor(code: PartnerErrorCode, options?: { cause?: unknown }) {
    super({ code: ERROR_CATALOGUE[code].trpcCode, message: ERROR_MESSAGE, cause: options?.cause });
    this.name = 'PartnerApiError';
    this.partnerCode = code;
  }
}

/** The partner code of any error a call ended with: ours carry it (maybe as a wrapper's cause); tRPC's map by code. */
export function partnerCodeOf(error: unknown): PartnerErrorCode {
  for (const current of causeChain(error)) {
    const code = current.partnerCode;
    if (typeof code === 'string' && code in ERROR_CATALOGUE) return code as PartnerErrorCode;
  }
  // Not one of ours: the tRPC code of the outermost error.
  switch (causeChain(error).next().value?.code) {
    case 'BAD_REQUEST':
    case 'PARSE_ERROR':
      return 'PARTNER_API_INVALID_PARAMETER';
    case 'NOT_FOUND':
    case 'METHOD_NOT_SUPPORTED':
    case 'NOT_IMPLEMENTED':
      return 'PARTNER_API_NOT_FOUND';
    case 'TOO_MANY_REQUESTS':
      return 'PARTNER_API_RATE_LIMITED';
    default:
      return 'PARTNER_API_INTERNAL_ERROR';
  }
}

/** The HTTP status any error answers with, on REST and the tRPC transport. */
export function httpStatusOf(error: unknown): number {
  return ERROR_CATALOGUE[partnerCodeOf(error)].httpStatus;
}
