import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { appRouter } from '../routers';
import { ERROR_CATALOGUE, ERROR_MESSAGE, errorEnvelope } from './errors';
import { restRoutes } from './routes';

type SchemaObject = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>[string];
type Operation = { responses?: Record<string, unknown>; [key: string]: unknown };

/**
 * The OpenAPI 3 document of the REST facade (D-15), generated from the router, then corrected where the
 * library documents its own error bodies: every error response is the partner envelope, with an example
 * per code the operation can answer (meta.partnerErrors), 429 included.
 */
export function openApiDocument() {
  const document = generateOpenApiDocument(appRouter, {
    title: 'Partner Reporting API',
    version: '1.0.0',
    description:
      'Read-only API for partners: brands, shop owners (users), shops, reviews, review statistics and sales. ' +
      'All dates and timestamps are KST (UTC+9). Every response is the envelope {status, status_code, message, data}.',
    baseUrl: '/',
    securitySchemes: { partnerApiKey: { type: 'apiKey', in: 'header', name: 'x-partner-api-key' } },
  });
  // The library's own error schemas (error.BAD_REQUEST, …) describe bodies this API never sends.
  const schemas = Object.entries(document.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.'));
  document.components = {
    ...document.components,
    schemas: { ...Object.fromEntries(schemas), PartnerError: partnerErrorSchema },
  };

  const codesByPath = new Map(restRoutes(appRouter).map((route) => [route.path, route.partnerErrors]));

  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const operation = (item as { get?: Operation }).get;
    if (!operation) continue;
    const codes = codesByPath.get(path) ?? [];
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (Number(status) < 400 && status !== 'default') responses[status] = response;
    }
    for (const status of [...new Set(codes.map((code) => ERROR_CATALOGUE[code].httpStatus))].sort()) {
      const examples = Object.fromEntries(
        codes
          .filter((code) => ERROR_CATALOGUE[code].httpStatus === status)
          .map((code) => [code, { value: errorEnvelope(code) }]),
      );
      responses[String(status)] = {
        description: codes.filter((code) => ERROR_CATALOGUE[code].httpStatus === status).join(', '),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/PartnerError' }, examples } },
      };
    }
    operation.responses = responses;
  }
  return document;
}

const partnerErrorSchema: SchemaObject = {
  type: 'object',
  description: 'The error envelope: no data, a fixed message; status is the error code.',
  required: ['status', 'status_code', 'message'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) },
    status_code: {
      type: 'integer',
      enum: [...new Set(Object.values(ERROR_CATALOGUE).map((entry) => entry.httpStatus))],
    },
    message: { type: 'string', enum: [ERROR_MESSAGE] },
  },
};
