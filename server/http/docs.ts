import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import express, { type Request, type Response, type Router } from 'express';
import { Marked } from 'marked';
import { gfmHeadingId } from 'marked-gfm-heading-id';

// GET /docs (D-15): the partner guide, the SDK's guide and Swagger UI, all served by this process (offline).

/** Resolved, not required: requiring swagger-ui-dist loads the browser bundle. */
const SWAGGER_UI = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only swagger-ui-dist files the reference page loads. */
const ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js'];

const GUIDE = path.resolve(import.meta.dirname, '../../docs/partner-guide.md');
const SDK_GUIDE = path.resolve(import.meta.dirname, '../../sdk/README.md');

// Prose rules apply to the guides' <main class="prose"> only: Swagger UI draws its own dark code blocks.
const STYLE = `
  body { font: 16px/1.55 system-ui, sans-serif; margin: 0; color: #1f2328; }
  nav { padding: 12px 24px; background: #1b2838; }
  nav a { color: #fff; margin-right: 24px; text-decoration: none; font-weight: 600; }
  .prose { max-width: 960px; margin: 0 auto; padding: 8px 24px 48px; }
  .prose pre, .prose code { font: 14px/1.45 ui-monospace, monospace; background: #f3f4f6; }
  .prose pre { padding: 12px; overflow-x: auto; }
  .prose table { border-collapse: collapse; margin: 12px 0; }
  .prose th, .prose td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; vertical-align: top; }
`;

/** The pages' icon, inline: a browser then asks the server for no /favicon.ico. */
const ICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E" +
  "%3Crect width='16' height='16' rx='3' fill='%231b2838'/%3E%3Cpath d='M4 12V4h4.5a2.5 2.5 0 0 1 0 5H4' " +
  "stroke='%23fff' stroke-width='2' fill='none'/%3E%3C/svg%3E";

const NAV = `<nav>
  <a href="/docs">Partner guide</a>
  <a href="/docs/sdk">TypeScript SDK</a>
  <a href="/docs/reference">API reference</a>
  <a href="/partner/v1/openapi.json">OpenAPI document</a>
</nav>`;

function page(title: string, head: string, body: string) {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="icon" href="${ICON}">
  <style>${STYLE}</style>
  ${head}
</head>
<body>
${NAV}
${body}
</body>
</html>
`;
}

/** A Markdown file of the repository as a page, with the file's time. It is ours, so its HTML is trusted. */
function markdownPage(title: string, file: string): [Buffer, Date] {
  const html = new Marked(gfmHeadingId()).parse(readFileSync(file, 'utf8'), { async: false });
  return [Buffer.from(page(title, '', `<main class="prose">${html}</main>`)), statSync(file).mtime];
}

// The document's server is relative ('/'): "Try it out" calls the server that serves the page.
const REFERENCE = page(
  'Partner Reporting API: reference',
  '<link rel="stylesheet" href="/docs/assets/swagger-ui.css">',
  `<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>
  SwaggerUIBundle({ url: '/partner/v1/openapi.json', dom_id: '#reference', deepLinking: true });
</script>`,
);

/** A body held once in memory, identity and gzip (made on first demand): unread responses share it (D-21). */
type StaticBody = { identity: Buffer; gzipped?: Promise<Buffer>; etag: string; lastModified: string };

const gzipAsync = promisify(gzip);

function staticBody(identity: Buffer, modified: Date): StaticBody {
  return {
    identity,
    etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
    lastModified: new Date(Math.floor(modified.getTime() / 1000) * 1000).toUTCString(),
  };
}

async function sendStatic(req: Request, res: Response, body: StaticBody, type: string, cacheControl: string) {
  const gzip = req.acceptsEncodings('gzip', 'identity') === 'gzip';
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('Last-Modified', body.lastModified);
  res.setHeader('Vary', 'Accept-Encoding');
  // One validator per representation, so a cache never serves one encoding for the other.
  res.setHeader('ETag', gzip ? `${body.etag.slice(0, -1)}-gzip"` : body.etag);
  if (notModified(req, res.getHeader('ETag') as string, body.lastModified)) return void res.status(304).end();
  if (gzip) body.gzipped ??= gzipAsync(body.identity, { level: 9 });
  const bytes = gzip && body.gzipped ? await body.gzipped : body.identity;
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

/** RFC 9110 §13.2.2, ignoring the request's Cache-Control (fetch sends `no-cache` with conditional requests). */
function notModified(req: Request, etag: string, lastModified: string) {
  const noneMatch = req.get('if-none-match');
  if (noneMatch !== undefined) {
    const weak = (tag: string) => tag.trim().replace(/^W\//, '');
    return noneMatch.trim() === '*' || noneMatch.split(',').some((tag) => weak(tag) === weak(etag));
  }
  const since = Date.parse(req.get('if-modified-since') ?? '');
  return !Number.isNaN(since) && Date.parse(lastModified) <= since;
}

/** Pages change with a deploy: revalidated each time (a 304 is cheap). Assets: an hour, then revalidated. */
const PAGE_CACHE = 'no-cache';
const ASSET_CACHE = 'public, max-age=3600';
const HTML = 'text/html; charset=utf-8';

/** The docs (D-15) and the OpenAPI document, each body made at its first request, not at start. */
export function docsRouter(openApiDocument: () => object): Router {
  const started = new Date();
  // Only the exact spelling of a path is served (D-12): `/DOCS` is another path; `/docs/` is redirected.
  const router = express.Router({ caseSensitive: true, strict: true });
  const serve = (at: string, type: string, cacheControl: string, make: () => [Buffer, Date]) => {
    let body: StaticBody | undefined;
    router.get(at, (req, res, next) => {
      body ??= staticBody(...make());
      sendStatic(req, res, body, type, cacheControl).catch(next);
    });
  };
  router.get(['/', '/docs/'], (_req, res) => res.redirect(302, '/docs'));
  serve('/partner/v1/openapi.json', 'application/json; charset=utf-8', PAGE_CACHE, () => [
    Buffer.from(JSON.stringify(openApiDocument())),
    started,
  ]);
  serve('/docs', HTML, PAGE_CACHE, () => markdownPage('Partner Reporting API: partner guide', GUIDE));
  serve('/docs/sdk', HTML, PAGE_CACHE, () => markdownPage('Partner Reporting API: TypeScript SDK', SDK_GUIDE));
  serve('/docs/reference', HTML, PAGE_CACHE, () => [Buffer.from(REFERENCE), started]);
  // An exact path per asset: express would decode a `:file` parameter, and fail on a malformed one.
  for (const file of ASSETS) {
    const at = path.join(SWAGGER_UI, file);
    const type = file.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    serve(`/docs/assets/${file}`, type, ASSET_CACHE, () => [readFileSync(at), statSync(at).mtime]);
  }
  return router;
}
