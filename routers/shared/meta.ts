import type { OpenApiMeta } from 'trpc-to-openapi';
import type { PartnerErrorCode } from '../../server/trpc/errors';

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

/** The resource tags of the OpenAPI document, with their descriptions; every read names one. */
export const TAGS = {
  Brands: 'The brands of the partner that owns the key. Every other read is inside one of them.',
  Users: 'Shop owners registered in a brand, with the platform accounts they linked.',
  Shops: 'Shops of a brand on each platform, with their owner, head-office managers and alert numbers.',
  Reviews: 'Reviews collected from the platforms, read in real time, newest first.',
  'Review statistics': 'Review and reply counts and the star distribution, from the daily aggregate (today excluded).',
  Sales: 'Summed daily sales snapshots in won, from the daily aggregate (today excluded).',
  Webhooks:
    'The endpoints the operator set up for the partner (signed review events, D-28), and every attempt to deliver to them.',
};

/** The OpenAPI meta of a read: GET at its /partner/v1 path, keyed; `errors` adds to the common codes. */
export function readOperation(operation: {
  path: `/partner/v1/${string}`;
  summary: string;
  description?: string;
  tag: keyof typeof TAGS;
  errors?: PartnerErrorCode[];
}): OpenApiMeta & Required<Pick<OpenApiMeta, 'openapi'>> & { partnerErrors: PartnerErrorCode[] } {
  const { path, summary, description, tag, errors = [] } = operation;
  return {
    openapi: { method: 'GET', path, summary, description, tags: [tag], protect: true },
    partnerErrors: [...errors, ...ALWAYS],
  };
}
