import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { appRouter } from '../routers';
import { openApiDocument } from '../server/http/openapi';
import { restRoutes } from '../server/http/routes';
import { ERROR_CATALOGUE, type PartnerErrorCode } from '../server/trpc/errors';
import { ENDPOINTS, endpointsWith } from './support/endpoints';

// D-15: the document partners generate clients from. It is generated from the router; the
// committed copy (openapi.json, `npm run openapi`) is what they download and what these rules judge.

type Schema = { $ref?: string; oneOf?: Schema[]; description?: string; maxLength?: number } & Record<string, unknown>;
type Parameter = { in: string; name: string; description?: string; schema: Schema };
type Response = { headers?: Record<string, { $ref: string }>; content: { 'application/json': { schema: Schema } } };
type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters?: Parameter[];
  responses: Record<string, Response>;
};
type Document = {
  info: { contact?: object; license?: { name: string } };
  servers: { url: string; variables?: Record<string, { default: string }> }[];
  tags: { name: string; description: string }[];
  paths: Record<string, { get: Operation }>;
  components: { schemas: Record<string, Schema>; headers: Record<string, unknown> };
};

const root = path.resolve(import.meta.dirname, '..');
const committedText = readFileSync(path.join(root, 'openapi.json'), 'utf8');
const committed = JSON.parse(committedText) as Document;
const operations = Object.entries(committed.paths).map(([route, item]) => ({ route, ...item.get }));
const operation = (route: string) => {
  const found = committed.paths[`/partner/v1${route}`]?.get;
  if (!found) throw new Error(`no operation at ${route}`);
  return found;
};
const parameter = (route: string, name: string) => operation(route).parameters?.find((p) => p.name === name);

/** The codes a response's schema admits: one $ref, or a oneOf of them, each fixing `status`. */
function codesOf(schema: Schema): string[] {
  const refs = schema.oneOf ?? [schema];
  return refs.map((member) => {
    const name = member.$ref?.replace('#/components/schemas/', '') ?? '';
    const properties = committed.components.schemas[name]?.properties as Record<string, { const?: string }>;
    return properties?.status?.const ?? `(no fixed status in ${name})`;
  });
}

describe('the committed openapi.json', () => {
  it('is what the router generates now (run `npm run openapi` after changing the router)', () => {
    expect(JSON.parse(JSON.stringify(openApiDocument()))).toEqual(committed);
  });

  it('is a valid OpenAPI 3.1 document (swagger-parser)', async () => {
    await expect(SwaggerParser.validate(structuredClone(committed) as never)).resolves.toBeDefined();
  });

  it('passes `redocly lint` with the recommended rules: no error, no warning', async () => {
    const { stdout } = await promisify(execFile)(
      path.join(root, 'node_modules/.bin/redocly'),
      ['lint', 'openapi.json', '--extends=recommended', '--format=json'],
      // No telemetry or update check: the suite talks to nothing but loopback.
      { cwd: root, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
    );
    const report = JSON.parse(stdout) as { totals: object; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('has every operation of the router, each with a summary, a declared tag and the key', () => {
    expect(operations.map((op) => op.route).sort()).toEqual(
      restRoutes(appRouter)
        .map((route) => route.path)
        .sort(),
    );
    // One operation per procedure: none is left off REST.
    expect(operations).toHaveLength(ENDPOINTS.length);
    const declared = new Map(committed.tags.map((tag) => [tag.name, tag.description]));
    for (const op of operations) {
      expect(op.summary).toBeTruthy();
      expect(op.tags.length).toBe(1);
      expect(declared.get(op.tags[0] as string)).toBeTruthy();
      expect((op as { security?: unknown }).security).toEqual([{ partnerApiKey: [] }]);
    }
  });

  it('names a contact and a license, and one relative server: whichever serves the document', () => {
    expect(committed.info.contact).toBeTruthy();
    expect(committed.info.license?.name).toBeTruthy();
    expect(committed.servers.map((server) => server.url)).toEqual(['/']);
  });
});

describe('parameters, as client generators read them', () => {
  it('carry their description on the Parameter object', () => {
    for (const op of operations) {
      for (const p of op.parameters ?? []) expect(p.description, `${op.operationId} ${p.name}`).toBeTruthy();
    }
  });

  it('carry no example, so "Try it out" fills in no value of its own (a fixed day in from/to)', () => {
    for (const op of operations) {
      for (const p of op.parameters ?? []) {
        expect(p.schema.example, `${op.operationId} ${p.name}`).toBeUndefined();
        expect((p as { example?: unknown }).example, `${op.operationId} ${p.name}`).toBeUndefined();
      }
    }
  });

  it('give keyword its 50-character limit, and platform_shop_id its own', () => {
    expect(parameter('/brands/{brand_code}/reviews', 'keyword')?.schema.maxLength).toBe(50);
    for (const route of ['/reviews', '/review-stats', '/sales']) {
      expect(parameter(`/brands/{brand_code}${route}`, 'platform_shop_id')?.schema.maxLength).toBe(100);
    }
  });

  it('name the platform value sets: Platform, and SalesPlatform for sales (partner guide § Parameters, § Sales)', () => {
    expect(committed.components.schemas.Platform?.enum).toEqual([
      'BAEMIN',
      'CPEATS',
      'YOGIYO',
      'DDANGYO',
      'NAVER',
      'MUKKEBI',
    ]);
    expect(committed.components.schemas.SalesPlatform?.enum).toEqual(['BAEMIN', 'CPEATS', 'YOGIYO']);
    expect(parameter('/brands/{brand_code}/reviews', 'platform')?.schema.$ref).toBe('#/components/schemas/Platform');
    expect(parameter('/brands/{brand_code}/sales', 'platform')?.schema.$ref).toBe('#/components/schemas/SalesPlatform');
  });

  it('state the 400 rules across parameters in the operation descriptions (D-11)', () => {
    expect(operation('/brands/{brand_code}/reviews').description).toMatch(
      /from later than to.*rating_min above rating_max/s,
    );
    for (const route of ['/review-stats', '/sales']) {
      expect(operation(`/brands/{brand_code}${route}`).description).toMatch(/from later than to.*after the defaults/s);
    }
    for (const op of operations.filter((op) => op.parameters?.some((p) => p.in === 'query'))) {
      expect(op.description, op.operationId).toContain('a parameter given twice is 400');
    }
  });
});

describe('responses', () => {
  it('list every code the operation can answer: its own, the key and limit codes, 404 NOT_FOUND and 500', () => {
    const declared = new Map(restRoutes(appRouter).map((route) => [route.path, route.partnerErrors]));
    for (const op of operations) {
      const expected = new Set<string>([...(declared.get(op.route) ?? []), 'PARTNER_API_NOT_FOUND']);
      for (const code of ['KEY_REQUIRED', 'KEY_INVALID', 'KEY_INACTIVE', 'KEY_EXPIRED', 'FORBIDDEN', 'RATE_LIMITED']) {
        expect(expected).toContain(`PARTNER_API_${code}`);
      }
      expect(expected).toContain('PARTNER_API_INTERNAL_ERROR');
      const listed = Object.entries(op.responses)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(([status, response]) => {
          // Narrow per status: each admitted code belongs to this status, so the union types the body.
          const codes = codesOf(response.content['application/json'].schema);
          for (const code of codes) {
            expect(ERROR_CATALOGUE[code as PartnerErrorCode]?.httpStatus, `${op.operationId} ${code}`).toBe(
              Number(status),
            );
          }
          return codes;
        });
      expect(listed.sort(), op.operationId).toEqual([...expected].sort());
    }
  });

  it('let every object gain fields, as v1 may add them (partner guide § Base address and versions)', () => {
    expect(committedText).not.toMatch(/"additionalProperties":\s*false/);
  });

  it('fix status, status_code and message in each error schema (partner guide § Errors, D-12)', () => {
    for (const code of Object.keys(ERROR_CATALOGUE) as PartnerErrorCode[]) {
      expect(committed.components.schemas[code]).toMatchObject({
        required: ['status', 'status_code', 'message'],
        properties: {
          status: { const: code },
          status_code: { const: ERROR_CATALOGUE[code].httpStatus },
          message: { const: 'The request cannot be processed.' },
        },
      });
    }
  });

  it('document x-request-id everywhere, the rate-limit headers past the key check, Retry-After on 429 and 500 (D-12, D-14, D-21)', () => {
    const names = (response: Response) => Object.keys(response.headers ?? {});
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        for (const header of Object.values(response.headers ?? {})) {
          expect(committed.components.headers[header.$ref.replace('#/components/headers/', '')]).toBeDefined();
        }
        expect(names(response)).toContain('X-Request-Id');
        const limited = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'];
        if (status === '401' || status === '403') expect(names(response)).not.toContain('RateLimit-Limit');
        else expect(names(response)).toEqual(expect.arrayContaining(limited));
        expect(names(response).includes('Retry-After')).toBe(status === '429' || status === '500');
      }
    }
  });

  it('document the Link header of the next cursor page on every list that takes a cursor (D-19)', () => {
    const withLink = operations.filter((op) => op.responses['200']?.headers?.Link).map((op) => op.route);
    const cursorPaged = endpointsWith('cursor').map((endpoint) => endpoint.route);
    expect(cursorPaged.length).toBeGreaterThan(0);
    expect(withLink.sort()).toEqual(cursorPaged.sort());
    expect(committed.components.headers.Link).toBeDefined();
  });
});

describe('schemas', () => {
  it("describe the review rating's real range: 0.5 to 5", () => {
    const review = committed.components.schemas.Review as { properties: Record<string, Schema> };
    const rating = review.properties.rating as Schema;
    expect(rating.description).toMatch(/^0\.5 to 5/);
    expect(JSON.stringify(rating)).toContain('"minimum":0.5');
  });

  it.each([
    ['ReviewStatsRow', { date: ['date'], shop: ['platform_shop_id', 'shop_name', 'platform'], platform: ['platform'] }],
    [
      'SalesRow',
      {
        shop: ['platform_shop_id', 'shop_name', 'platform', 'user'],
        platform: ['platform'],
        user: ['user'],
        date: ['date'],
        week: ['week_start'],
      },
    ],
  ] as const)(
    'make a %s oneOf its group_by variants with a discriminator; each fills its own fields, the rest are null (partner guide § Endpoints)',
    (name, filled) => {
      const row = committed.components.schemas[name] as Schema & {
        discriminator: { propertyName: string; mapping: Record<string, string> };
      };
      expect(row.discriminator.propertyName).toBe('group_by');
      expect(Object.keys(row.discriminator.mapping)).toEqual(Object.keys(filled));
      expect(row.oneOf?.map((variant) => variant.$ref)).toEqual(Object.values(row.discriminator.mapping));
      const fieldsOf = (ref: string) => {
        const variant = committed.components.schemas[ref.replace('#/components/schemas/', '')] as {
          properties: Record<string, Schema>;
          required: string[];
        };
        return { properties: variant.properties, required: variant.required };
      };
      const [first] = Object.values(row.discriminator.mapping);
      const allFields = Object.keys(fieldsOf(first as string).properties);
      for (const [groupBy, ref] of Object.entries(row.discriminator.mapping)) {
        const { properties, required } = fieldsOf(ref);
        expect(Object.keys(properties), groupBy).toEqual(allFields);
        expect(required, groupBy).toEqual(allFields);
        expect(properties.group_by?.const, groupBy).toBe(groupBy);
        const own = filled[groupBy as keyof typeof filled] as readonly string[];
        const nullOnly = allFields.filter((field) => properties[field]?.type === 'null');
        expect(nullOnly, groupBy).toEqual(
          allFields.filter((field) => field !== 'group_by' && !own.includes(field) && !/count|amount/.test(field)),
        );
      }
    },
  );

  it('carry no bounds of ±(2^53 − 1) left by zod integers', () => {
    expect(committedText).not.toContain(String(Number.MAX_SAFE_INTEGER));
  });
});
