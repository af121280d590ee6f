import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { z } from 'zod';
import { appRouter } from '../../routers';
import { TAGS } from '../../routers/shared/meta';
import { webhookEventSchema } from '../../routers/webhooks/events.schema';
import {
  ERROR_CATALOGUE,
  ERROR_DESCRIPTIONS,
  ERROR_MESSAGE,
  errorEnvelope,
  type PartnerErrorCode,
} from '../trpc/errors';
import { restRoutes } from './routes';

// The REST facade's OpenAPI document (D-15), finished where the library stops short of what clients need.

type Json = Record<string, unknown>;
type Parameter = { in: string; name: string; description?: string; schema?: Json };
type Operation = {
  operationId?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  responses?: Record<string, Json>;
};

/** Reusable response headers (D-12, D-14, D-19). */
const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description:
      'Identifies this request in the server logs: the x-request-id you sent if it matches ' +
      '[A-Za-z0-9._:-]{1,128}, otherwise a new one. On every answer; quote it when reporting a problem.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  },
  'RateLimit-Limit': {
    description:
      'Calls allowed per sliding minute for this key. On every answer to a call whose key passed the check ' +
      '(not on 401, 403 or a wrong path).',
    schema: { type: 'integer', minimum: 1, example: 100 },
  },
  'RateLimit-Remaining': {
    description: 'Calls left in the current window, after this one.',
    schema: { type: 'integer', minimum: 0, example: 99 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the window frees a call: when Remaining is 0, the moment the next call is accepted.',
    schema: { type: 'integer', minimum: 1, example: 60 },
  },
  'RateLimit-Policy': {
    description: 'The policy (IETF RateLimit header fields draft): q calls per w seconds, a sliding window.',
    schema: { type: 'string', example: '"default";q=100;w=60' },
  },
  'Retry-After': {
    description:
      'On a 429: whole seconds to wait before the next call is accepted. On a 500 when the service had no ' +
      'database connection free for the call in time: whole seconds after which a retry is worthwhile.',
    schema: { type: 'integer', minimum: 1, example: 12 },
  },
  ETag: {
    description:
      'A weak tag of this answer for your partner account. Send it back in If-None-Match: while the answer ' +
      'is the same, the call answers 304 with no body (partner guide § Conditional requests).',
    schema: { type: 'string', example: 'W/"clAwSOdYIXNYhXAbgwHAnu"' },
  },
  'Cache-Control': {
    description: '`private`: the answer belongs to the key that asked; shared caches must not store it.',
    schema: { type: 'string', const: 'private' },
  },
  Link: {
    description:
      'When has_next is true: the next page, `<path?…&limit=n&cursor=…>; rel="next"`, a path-absolute URL ' +
      'whose opaque cursor continues after the last item (on the review list, under the same filters).',
    schema: {
      type: 'string',
      example: '</partner/v1/brands/chicken-house/reviews?limit=20&cursor=eyJkIjoiMjAyNi0xMS0yMSJ9>; rel="next"',
    },
  },
};

const ref = (kind: 'headers' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'];

/** The headers an answer of this status carries: the key check answers (401, 403) carry no rate limit. */
function headersFor(status: number, extra: string[] = []) {
  const names = ['X-Request-Id'];
  if (status !== 401 && status !== 403) names.push(...RATE_LIMIT_HEADERS);
  if (status === 429 || status === 500) names.push('Retry-After');
  return Object.fromEntries([...names, ...extra].map((name) => [name, ref('headers', name)]));
}

/** D-27: on every operation; a matching tag answers 304 (its response below). */
const IF_NONE_MATCH: Parameter = {
  in: 'header',
  name: 'If-None-Match',
  description:
    'ETags of answers you kept (a list, or `*`), compared weakly. When the answer would be the same, the call ' +
    'answers 304 with no body, which does not count against the limit (up to 1,000 a minute per key).',
  schema: { type: 'string' },
};

/** Stated on every operation with query parameters: how the whole query string is read (D-11). */
const QUERY_RULES =
  'Query parameters: a parameter given twice is 400 PARTNER_API_INVALID_PARAMETER; an empty value ' +
  '(`keyword=`) counts as absent; unknown parameters are ignored.';

export function openApiDocument(): OpenAPIObject {
  const document = generateOpenApiDocument(appRouter, {
    title: 'Partner Reporting API',
    version: '1.0.0',
    description:
      'Read-only API for partners: brands, shop owners (users), shops, reviews, review statistics and sales. ' +
      'Every call is a GET with the x-partner-api-key header. Every response body is the envelope ' +
      '{status, status_code, message, data}; an error has no data and one fixed message, and its status is ' +
      'the error code. All dates are KST days (YYYY-MM-DD) and timestamps KST with +09:00. Calls are limited ' +
      'to 100 per sliding minute per key. The partner guide at /docs explains each rule with examples. ' +
      "This version (info.version) is the API's: its major number is the v1 of the paths. The TypeScript " +
      'SDK (guide at /docs/sdk) has its own package version.',
    contact: { name: 'Partner Reporting API team' },
    license: { name: 'Proprietary: for partners holding an API key', identifier: 'LicenseRef-Proprietary' },
    baseUrl: 'http://127.0.0.1:3000',
    securitySchemes: {
      partnerApiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'x-partner-api-key',
        description:
          "The partner's API key. Missing: 401 PARTNER_API_KEY_REQUIRED; unknown: 401 PARTNER_API_KEY_INVALID; " +
          'revoked: 401 PARTNER_API_KEY_INACTIVE; expired: 401 PARTNER_API_KEY_EXPIRED; partner deactivated: ' +
          '403 PARTNER_API_FORBIDDEN.',
      },
    },
  });

  document.servers = [
    {
      url: '/',
      description:
        'The server this document is served from. With a downloaded copy: the address you were given ' +
        '(paths start with /partner/v1).',
    },
  ];

  const usedTags = new Set<string>();
  const codesByPath = new Map(restRoutes(appRouter).map((route) => [route.path, route.partnerErrors]));
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const operation = (item as { get?: Operation }).get;
    if (!operation) continue;
    for (const tag of operation.tags ?? []) usedTags.add(tag);
    finishParameters(operation);
    operation.parameters = [...(operation.parameters ?? []), IF_NONE_MATCH];
    // Any path or method outside the API is 404 PARTNER_API_NOT_FOUND (D-12): every operation can see it.
    const codes = [...new Set([...(codesByPath.get(path) ?? []), 'PARTNER_API_NOT_FOUND' as const])];
    // A read that takes `cursor` answers a `Link: rel="next"` to the next cursor page (D-19).
    const cursorPaged = operation.parameters?.some(({ in: place, name }) => place === 'query' && name === 'cursor');
    operation.responses = {
      '200': {
        ...operation.responses?.['200'],
        description: 'The envelope with data.',
        headers: headersFor(200, ['ETag', 'Cache-Control', ...(cursorPaged ? ['Link'] : [])]),
      },
      '304': {
        description: 'Not modified: If-None-Match matched the answer. No body; the headers of the 200.',
        headers: headersFor(304, ['ETag', 'Cache-Control']),
      },
      ...errorResponses(codes),
    };
  }

  document.tags = Object.entries(TAGS)
    .filter(([name]) => usedTags.has(name))
    .map(([name, description]) => ({ name, description }));

  // The library's own error schemas (error.BAD_REQUEST, …) describe bodies this API never sends.
  const schemas = Object.entries(document.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.'));
  const events = webhookEvents();
  document.components = {
    ...document.components,
    schemas: { ...events.schemas, ...Object.fromEntries(schemas), ...errorSchemas() },
    headers: HEADERS,
  };
  document.webhooks = events.webhooks as OpenAPIObject['webhooks'];
  return withoutLibraryNoise(document) as OpenAPIObject;
}

/** The Standard Webhooks headers of every delivery (D-28). */
const WEBHOOK_HEADERS: Parameter[] = [
  {
    in: 'header',
    name: 'webhook-id',
    description: 'The event’s id (msg_…), the same on every retry: your idempotency key.',
    schema: { type: 'string' },
  },
  {
    in: 'header',
    name: 'webhook-timestamp',
    description: 'When this attempt was signed, in Unix seconds.',
    schema: { type: 'string' },
  },
  {
    in: 'header',
    name: 'webhook-signature',
    description:
      'Space-separated `v1,<base64>` signatures (two during a secret rotation): verify one with your whsec_ secret.',
    schema: { type: 'string' },
  },
];

/**
 * The events a webhook endpoint receives (D-28), as OpenAPI 3.1 webhooks: a signed POST with the event as
 * its body. Their schemas join the components; the ones the reads already define (Review) are kept.
 */
function webhookEvents(): { webhooks: Record<string, Json>; schemas: Record<string, Json> } {
  const webhooks: Record<string, Json> = {};
  const schemas: Record<string, Json> = {};
  for (const event of webhookEventSchema.options) {
    const json = z.toJSONSchema(event, { io: 'output', unrepresentable: 'any' }) as { $defs?: Record<string, Json> };
    const defs = JSON.parse(JSON.stringify(json.$defs ?? {}).replaceAll('"#/$defs/', '"#/components/schemas/'));
    Object.assign(schemas, defs);
    const id = (event.meta() as { id: string; description: string }).id;
    const type = event.shape.type.value;
    webhooks[type] = {
      post: {
        operationId: `event.${type}`,
        summary: type,
        // Sent by us, signed (webhook-signature), with no API key.
        security: [],
        description: (event.meta() as { description: string }).description,
        tags: ['Webhooks'],
        parameters: WEBHOOK_HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', id) } } },
        responses: {
          '2XX': { description: 'Received: the event is not sent again.' },
          '410': { description: 'Gone: the endpoint is disabled; nothing more is sent until it is enabled again.' },
          default: {
            description: 'Retried after 5 s, 5 min, 30 min, 2, 5, 10, 14, 20 and 24 h, or after Retry-After if later.',
          },
        },
      },
    };
  }
  return { webhooks, schemas };
}

/** Descriptions on the Parameter object, where client generators read them, not only in its schema. */
function finishParameters(operation: Operation) {
  for (const parameter of operation.parameters ?? []) {
    const description = parameter.schema?.description;
    if (typeof description === 'string') {
      parameter.description ??= description;
      delete parameter.schema?.description;
    }
    // An example is what "Try it out" fills in: a fixed day would narrow every call to that day.
    delete parameter.schema?.example;
  }
  if (operation.parameters?.some((parameter) => parameter.in === 'query'))
    operation.description = [operation.description, QUERY_RULES].filter(Boolean).join('\n\n');
}

/** One schema per error code: the envelope with its status, status_code and message fixed (partner guide § Errors). */
function errorSchemas(): Record<string, Json> {
  return Object.fromEntries(
    (Object.keys(ERROR_CATALOGUE) as PartnerErrorCode[]).map((code) => [
      code,
      {
        type: 'object',
        description: ERROR_DESCRIPTIONS[code],
        required: ['status', 'status_code', 'message'],
        properties: {
          status: { type: 'string', const: code },
          status_code: { type: 'integer', const: ERROR_CATALOGUE[code].httpStatus },
          message: { type: 'string', const: ERROR_MESSAGE },
        },
      },
    ]),
  );
}

/** Per status, exactly the codes this operation can answer: one schema, or a union told apart by status. */
function errorResponses(codes: PartnerErrorCode[]): Record<string, Json> {
  const statuses = [...new Set(codes.map((code) => ERROR_CATALOGUE[code].httpStatus))].sort();
  return Object.fromEntries(
    statuses.map((status) => {
      const own = codes.filter((code) => ERROR_CATALOGUE[code].httpStatus === status);
      const schema =
        own.length === 1
          ? ref('schemas', own[0] as string)
          : {
              oneOf: own.map((code) => ref('schemas', code)),
              discriminator: {
                propertyName: 'status',
                mapping: Object.fromEntries(own.map((code) => [code, ref('schemas', code).$ref])),
              },
            };
      const examples = Object.fromEntries(
        own.map((code) => [code, { summary: ERROR_DESCRIPTIONS[code], value: errorEnvelope(code) }]),
      );
      const content = { 'application/json': { schema, examples } };
      return [String(status), { description: own.join(', '), headers: headersFor(status), content }];
    }),
  );
}

/** Drops zod's ±(2^53 − 1) integer bounds and `additionalProperties: false` (v1 may add fields): not rules of this API. */
function withoutLibraryNoise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutLibraryNoise);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(
        ([key, field]) =>
          !((key === 'minimum' || key === 'maximum') && Math.abs(field as number) === Number.MAX_SAFE_INTEGER) &&
          !(key === 'additionalProperties' && field === false),
      )
      .map(([key, field]) => [key, withoutLibraryNoise(field)]),
  );
}
