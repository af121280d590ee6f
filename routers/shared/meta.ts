import type { OpenApiMeta } from 'trpc-to-openapi';
import type { PartnerErrorCode } from '../../server/errors';

/** Errors every partner read can answer (partner guide § Errors rows marked "all"). */
const ALWAYS: PartnerErrorCode[] = [
  'PARTNER_API_KEY_REQUIRED',
  'PARTNER_API_KEY_INVALID',
  'PARTNER_API_KEY_INACTIVE',
  'PARTNER_API_KEY_EXPIRED',
  'PARTNER_API_FORBIDDEN',
  'PARTNER_API_RATE_LIMITED',
  'PARTNER_API_INTERNAL_ERROR',
];

/** The OpenAPI meta of a read: GET at its /partner/v1 path, keyed; `errors` adds to the common codes. */
export function readOperation(operation: {
  path: `/partner/v1/${string}`;
  summary: string;
  description?: string;
  tag: string;
  errors?: PartnerErrorCode[];
}): OpenApiMeta & { partnerErrors: PartnerErrorCode[] } {
  const { path, summary, description, tag, errors = [] } = operation;
  return {
    openapi: { method: 'GET', path, summary, description, tags: [tag], protect: true },
    partnerErrors: [...errors, ...ALWAYS],
  };
}
