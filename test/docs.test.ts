import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { openTestDatabase } from './support/database';
import { ENDPOINTS } from './support/endpoints';
import { expectErrorBody } from './support/errors';
import { startServer, testServices } from './support/services';

// D-15: /docs is the partner guide with the reference, served offline by this process;
// /docs/assets serves only the files the reference page loads.

const root = path.resolve(import.meta.dirname, '..');
let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  const database = await openTestDatabase();
  server = await startServer(testServices(database.db));
});

describe('/docs', () => {
  it('renders the partner guide as HTML, with links to the reference and the document', async () => {
    const page = await server.request('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = String(page.body);
    for (const heading of ['Authentication', 'Errors', 'Rate limit', 'Pages', 'Dates and time (KST)', 'Endpoints']) {
      expect(html).toContain(`>${heading}</h2>`);
    }
    // Headings carry the ids the guide's table of contents links to.
    expect(html).toContain('id="dates-and-time-kst"');
    expect(html).toContain('href="#dates-and-time-kst"');
    expect(html).toContain('href="/docs/reference"');
    expect(html).toContain('href="/partner/v1/openapi.json"');
    expect(html).not.toContain('```');
  });

  it('serves the SDK guide (the README the package carries) at /docs/sdk, linked from every page', async () => {
    const page = await server.request('/docs/sdk');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = String(page.body);
    expect(html).toContain('>@partner-reporting/sdk</h1>');
    for (const heading of [
      'Cancel and timeouts',
      'Review change feed',
      'Conditional requests',
      'Versions and compatibility',
    ])
      expect(html).toContain(`>${heading}</h2>`);
    expect(html).not.toContain('```');
    expect(String((await server.request('/docs')).body)).toContain('href="/docs/sdk"');
  });

  it('leads each link within the SDK guide to one of its headings', async () => {
    const html = String((await server.request('/docs/sdk')).body);
    const ids = new Set([...html.matchAll(/ id="([^"]+)"/g)].map((match) => match[1]));
    const links = [...html.matchAll(/href="#([^"]+)"/g)].map((match) => match[1]);
    expect(links).toEqual(expect.arrayContaining(['review-change-feed', 'conditional-requests']));
    expect(links.filter((id) => !ids.has(id))).toEqual([]);
  });

  it('names every error code of the catalogue in the guide', async () => {
    const { ERROR_CATALOGUE } = await import('../server/trpc/errors');
    const html = String((await server.request('/docs')).body);
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(html, code).toContain(code);
  });

  it('gives curl examples that each answer 200 with the demo key', async () => {
    const guide = readFileSync(path.join(root, 'docs/partner-guide.md'), 'utf8');
    const examples = [...guide.matchAll(/curl -H "\$KEY" "\$API([^"]+)"/g)].map((match) => match[1] as string);
    expect(examples.length).toBeGreaterThanOrEqual(12);
    for (const example of examples) {
      const response = await server.request(`/partner/v1${example}`, { key: DEMO_KEYS.active });
      expect(response.status, example).toBe(200);
    }
  });

  it('serves the reference page, loading Swagger UI from this server only', async () => {
    const page = await server.request('/docs/reference');
    expect(page.status).toBe(200);
    const html = String(page.body);
    expect(html).toContain('/partner/v1/openapi.json');
    const sources = [...html.matchAll(/(?:src|href)="([^"#]+)"/g)].map((match) => match[1] as string);
    // Its own paths, or inline (the icon).
    expect(sources.filter((source) => !source.startsWith('/') && !source.startsWith('data:'))).toEqual([]);
    for (const asset of sources.filter((source) => source.startsWith('/docs/assets/'))) {
      const response = await fetch(`${server.base}${asset}`);
      expect(response.status, asset).toBe(200);
      await response.arrayBuffer();
    }
  });

  it.each(['/', '/docs/'])('leads %s to the guide at /docs', async (at) => {
    const response = await fetch(`${server.base}${at}`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/docs');
    await response.arrayBuffer();
  });

  it('gives every page an inline icon, so no browser asks for /favicon.ico', async () => {
    for (const at of ['/docs', '/docs/sdk', '/docs/reference']) {
      expect(String((await server.request(at)).body), at).toMatch(/<link rel="icon" href="data:image\/svg\+xml,/);
    }
  });

  it('serves the committed openapi.json at /partner/v1/openapi.json', async () => {
    const served = await server.request('/partner/v1/openapi.json');
    expect(served.body).toEqual(JSON.parse(readFileSync(path.join(root, 'openapi.json'), 'utf8')));
  });
});

describe('/docs/assets serves only what the reference page loads', () => {
  it.each(['swagger-ui.css', 'swagger-ui-bundle.js'])('serves %s, which the reference page loads', async (file) => {
    const response = await fetch(`${server.base}/docs/assets/${file}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(file.endsWith('.css') ? /text\/css/ : /javascript/);
    await response.arrayBuffer();
  });

  it.each([
    'package.json',
    'README.md',
    'index.html',
    'swagger-initializer.js',
    'swagger-ui-bundle.js.map',
    'oauth2-redirect.html',
    '',
    '..%2Fpackage.json',
    '%2E%2E/%2E%2E/package.json',
  ])('does not serve /docs/assets/%s: 404 PARTNER_API_NOT_FOUND', async (file) => {
    expectErrorBody(await server.request(`/docs/assets/${file}`), 'PARTNER_API_NOT_FOUND');
  });
});

describe('the partner guide § Endpoints', () => {
  const guide = readFileSync(path.join(root, 'docs/partner-guide.md'), 'utf8');
  const endpoints = guide.slice(
    guide.indexOf('\n## Endpoints\n'),
    guide.indexOf('\n## ', guide.indexOf('\n## Endpoints\n') + 1),
  );
  /** What every endpoint's section shares: the lines before the first endpoint (`Lists take \`page\` …`). */
  const shared = endpoints.slice(0, endpoints.indexOf('\n### '));
  const sectionOf = (route: string) => {
    const start = endpoints.indexOf(`\`GET ${route}\``);
    if (start < 0) return undefined;
    const end = endpoints.indexOf('\n### ', start);
    return endpoints.slice(start, end < 0 ? undefined : end);
  };

  // The router is the list: a parameter added to a procedure's input fails here until the guide names it.
  it.each(ENDPOINTS.map((endpoint) => [endpoint.name, endpoint] as const))(
    '%s: its section names every parameter of its input',
    (_, endpoint) => {
      const section = sectionOf(endpoint.route);
      expect(section, `no section headed \`GET ${endpoint.route}\``).toBeDefined();
      // In backquotes (`from`, `platform=BAEMIN`), or in the path of the heading ({brand_code}).
      const named = (parameter: string) =>
        new RegExp(`\`${parameter}(=[^\`]*)?\`|\\{${parameter}\\}`).test(`${section}\n${shared}`);
      expect(endpoint.parameters.filter((parameter) => !named(parameter))).toEqual([]);
    },
  );
});
