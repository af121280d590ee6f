import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import type { AppRouter } from '../routers';
import { type ChangeFeed, createPartnerClient, type FeedPage, PartnerApiError } from '../sdk/src';
import { FEEDS } from '../sdk/src/api.generated';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND, DEMO_USER, ENDPOINTS, loadSamples } from './support/endpoints';
import { startServer, testServices } from './support/services';

// Interop (D-15): a partner on plain REST generates types from the committed openapi.json with
// openapi-typescript, calls every operation through openapi-fetch, and gets exactly what the tRPC
// transport (D-18) answers. The generated client lives in a scratch folder under test/artifacts/
// (git-ignored), inside the project so that it resolves openapi-fetch like a partner's project would.

const root = path.resolve(import.meta.dirname, '..');
const artifacts = path.join(root, 'test/artifacts');
mkdirSync(artifacts, { recursive: true });
const scratch = mkdtempSync(path.join(artifacts, 'interop-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The partner's code: every operation through openapi-fetch, typed by the generated `paths`. The
 * `@ts-expect-error` lines are calls the document must forbid; tsc fails if they compile.
 */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './schema';

export type Client = ReturnType<typeof createClient<paths>>;

export function client(baseUrl: string, apiKey: string): Client {
  return createClient<paths>({ baseUrl, headers: { 'x-partner-api-key': apiKey } });
}

export async function callEveryOperation(api: Client, brand_code: string, user_code: string) {
  const path = { brand_code };
  const reviews = await api.GET('/partner/v1/brands/{brand_code}/reviews', {
    params: { path, query: { rating_min: 4, replied: false, keyword: '치킨', limit: 5 } },
  });
  const review_id = reviews.data?.data.items[0]?.review_id ?? 'none';
  const answers = {
    'brands.list': await api.GET('/partner/v1/brands', { params: { query: { limit: 2 } } }),
    'users.list': await api.GET('/partner/v1/brands/{brand_code}/users', { params: { path, query: { page: 2, limit: 3 } } }),
    'users.get': await api.GET('/partner/v1/brands/{brand_code}/users/{user_code}', { params: { path: { brand_code, user_code } } }),
    'shops.list': await api.GET('/partner/v1/brands/{brand_code}/shops', { params: { path, query: { limit: 4 } } }),
    'reviews.list': reviews,
    'reviews.get': await api.GET('/partner/v1/brands/{brand_code}/reviews/{review_id}', { params: { path: { brand_code, review_id } } }),
    'reviewStats.list': await api.GET('/partner/v1/brands/{brand_code}/review-stats', { params: { path, query: { group_by: 'platform' } } }),
    'sales.list': await api.GET('/partner/v1/brands/{brand_code}/sales', { params: { path, query: { group_by: 'user', platform: 'BAEMIN' } } }),
  };
  return { review_id, answers: Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, { status: answer.response.status, body: answer.data ?? answer.error }])) };
}

export async function missingUser(api: Client, brand_code: string) {
  const { data, error } = await api.GET('/partner/v1/brands/{brand_code}/users/{user_code}', {
    params: { path: { brand_code, user_code: 'u-nobody' } },
  });
  if (data) return data.data.user_code;
  // The error body is a union of the codes this operation answers, told apart by status.
  if (error.status === 'PARTNER_API_USER_NOT_FOUND') return error.status;
  // @ts-expect-error users.get never answers PARTNER_API_REVIEW_NOT_FOUND
  if (error.status === 'PARTNER_API_REVIEW_NOT_FOUND') return error.status;
  return error.status;
}

/** Report rows are a oneOf told apart by group_by: checking it narrows each row to its own fields. */
export async function weekStarts(api: Client, brand_code: string) {
  const { data } = await api.GET('/partner/v1/brands/{brand_code}/sales', {
    params: { path: { brand_code }, query: { group_by: 'week', limit: 100 } },
  });
  return (data?.data.items ?? []).map((row) => {
    if (row.group_by !== 'week') throw new Error(\`a \${row.group_by} row in a week report\`);
    const week: string = row.week_start;
    // @ts-expect-error a week row has no day (the document says null; openapi-fetch's Readable drops
    // fields whose only type is null, so here the field is not there at all)
    const day: string = row.date;
    void day;
    return week;
  });
}

export async function forbiddenCalls(api: Client) {
  const path = { brand_code: 'chicken-house' };
  // @ts-expect-error keyword is a string
  await api.GET('/partner/v1/brands/{brand_code}/reviews', { params: { path, query: { keyword: 5 } } });
  // @ts-expect-error sales cover BAEMIN, CPEATS and YOGIYO only
  await api.GET('/partner/v1/brands/{brand_code}/sales', { params: { path, query: { platform: 'NAVER' } } });
  // @ts-expect-error group_by of review statistics is date, shop or platform
  await api.GET('/partner/v1/brands/{brand_code}/review-stats', { params: { path, query: { group_by: 'week' } } });
  // @ts-expect-error brand_code is required
  await api.GET('/partner/v1/brands/{brand_code}/shops', { params: { path: {} } });
}
`;

/** What the test reads of the generated module (its own types exist only once it is generated). */
type GeneratedClient = {
  client(baseUrl: string, apiKey: string): unknown;
  callEveryOperation(
    api: unknown,
    brandCode: string,
    userCode: string,
  ): Promise<{ review_id: string; answers: Record<string, { status: number; body: unknown }> }>;
  missingUser(api: unknown, brandCode: string): Promise<string>;
  weekStarts(api: unknown, brandCode: string): Promise<string[]>;
};
/** The generated client as a plain GET of any path (for operations the partner code does not name). */
type PlainClient = { GET(path: string): Promise<{ response: Response; data?: unknown; error?: unknown }> };
const generatedClient = async () => (await import(path.join(scratch, 'client.ts'))) as GeneratedClient;

let base: string;
let schemaSource: string;

beforeAll(async () => {
  const database = await openTestDatabase();
  const services = testServices(database.db);
  await loadSamples(services);
  base = (await startServer(services)).base;
  schemaSource = astToString(await openapiTS(pathToFileURL(path.join(root, 'openapi.json'))));
  writeFileSync(path.join(scratch, 'schema.d.ts'), schemaSource);
  writeFileSync(path.join(scratch, 'client.ts'), CLIENT);
});

describe('a client generated from openapi.json', () => {
  it('has a type for every operation of the document', () => {
    // trpc-to-openapi names each operation by its procedure's path, dots as dashes.
    for (const operationId of ENDPOINTS.map((endpoint) => endpoint.name.replaceAll('.', '-'))) {
      expect(schemaSource).toContain(`"${operationId}": {`);
    }
  });

  it('type-checks strictly, and rejects wrong filter names, values and error codes', () => {
    const program = ts.createProgram([path.join(scratch, 'client.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: false,
      types: [],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(problems).toEqual([]);
  });

  it('gets from every REST operation exactly the data the SDK answers', async () => {
    const generated = await generatedClient();
    const rest = await generated.callEveryOperation(generated.client(base, DEMO_KEYS.active), DEMO_BRAND, DEMO_USER);

    const sdk = createPartnerClient({ baseUrl: base, apiKey: DEMO_KEYS.active, retries: 0 });
    const brand_code = DEMO_BRAND;
    const expected = {
      'brands.list': await sdk.brands.list({ limit: 2 }),
      'users.list': await sdk.users.list({ brand_code, page: 2, limit: 3 }),
      'users.get': await sdk.users.get({ brand_code, user_code: DEMO_USER }),
      'shops.list': await sdk.shops.list({ brand_code, limit: 4 }),
      'reviews.list': await sdk.reviews.list({ brand_code, rating_min: 4, replied: false, keyword: '치킨', limit: 5 }),
      'reviews.get': await sdk.reviews.get({ brand_code, review_id: rest.review_id }),
      'reviewStats.list': await sdk.reviewStats.list({ brand_code, group_by: 'platform' }),
      'sales.list': await sdk.sales.list({ brand_code, group_by: 'user', platform: 'BAEMIN' }),
    };

    expect(Object.keys(rest.answers).sort()).toEqual(Object.keys(expected).sort());
    expect(rest.review_id).not.toBe('none');
    for (const [name, data] of Object.entries(expected)) {
      const answer = rest.answers[name] as { status: number; body: { status: string; data: unknown } };
      expect(answer.status, name).toBe(200);
      expect(answer.body.status, name).toBe('SUCCESS');
      expect(answer.body.data, name).toEqual(data);
      expect(JSON.stringify(data), `${name} should not be empty`).not.toContain('"items":[]');
    }

    // An operation of the router the partner code above does not call yet: its path with ids sampled from
    // the data, through the same generated client, against the SDK's procedure of the same name.
    const api = generated.client(base, DEMO_KEYS.active) as PlainClient;
    for (const endpoint of ENDPOINTS.filter((endpoint) => !(endpoint.name in expected))) {
      const answer = await api.GET(endpoint.path(DEMO_BRAND));
      const body = (answer.data ?? answer.error) as { status: string; data: unknown };
      expect(answer.response.status, endpoint.name).toBe(200);
      const called: unknown = endpoint.call(sdk, DEMO_BRAND);
      const feeds: readonly string[] = FEEDS;
      if (!feeds.includes(endpoint.name)) {
        expect(body.data, endpoint.name).toEqual(await (called as Promise<unknown>));
        continue;
      }
      // A feed's method is a ChangeFeed, not a promise (sdk/README.md): its first page is the REST answer,
      // but for the cursor, which holds the database's transaction horizon when each walk began (D-26), and
      // other sessions of a shared PostgreSQL move it.
      const { next_cursor, ...page } = await (called as ChangeFeed<FeedPage>).nextPage();
      expect(body.data, endpoint.name).toEqual({ ...page, next_cursor: expect.any(String) });
      expect(next_cursor, endpoint.name).toEqual(expect.any(String));
    }
  });

  it('narrows a report row by its group_by (oneOf with a discriminator), as the SDK does', async () => {
    const generated = await generatedClient();
    const weeks = await generated.weekStarts(generated.client(base, DEMO_KEYS.active), DEMO_BRAND);
    expect(weeks.length).toBeGreaterThan(0);
    const sdk = createPartnerClient({ baseUrl: base, apiKey: DEMO_KEYS.active, retries: 0 });
    const { items } = await sdk.sales.list({ brand_code: DEMO_BRAND, group_by: 'week', limit: 100 });
    expect(items.map((row) => row.week_start)).toEqual(weeks);
  });

  it('receives the same partner error code as the SDK and the tRPC transport', async () => {
    const generated = await generatedClient();
    const code = await generated.missingUser(generated.client(base, DEMO_KEYS.active), DEMO_BRAND);
    expect(code).toBe('PARTNER_API_USER_NOT_FOUND');
    const trpc = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${base}/partner/v1/trpc`, headers: { 'x-partner-api-key': DEMO_KEYS.active } })],
    });
    const error = await trpc.users.get.query({ brand_code: DEMO_BRAND, user_code: 'u-nobody' }).catch((e) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<AppRouter>).data).toMatchObject({ partner: { status: code } });
    const sdk = createPartnerClient({ baseUrl: base, apiKey: DEMO_KEYS.active, retries: 0 });
    const thrown = await sdk.users.get({ brand_code: DEMO_BRAND, user_code: 'u-nobody' }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(PartnerApiError);
    expect(thrown).toMatchObject({ code, status: 404 });
  });
});
