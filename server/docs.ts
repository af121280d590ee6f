import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';
import { Marked } from 'marked';
import { gfmHeadingId } from 'marked-gfm-heading-id';

// GET /docs (D-15): the partner guide (docs/partner-guide.md, rendered once at start), at /docs/sdk the
// TypeScript SDK's guide (sdk/README.md, the one its package carries) and, at /docs/reference, Swagger UI
// over /partner/v1/openapi.json. Everything is served from this process, so the pages work offline.

/** The swagger-ui-dist folder, resolved, not required: requiring it loads the browser bundle. */
const SWAGGER_UI = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * The only files of swagger-ui-dist the reference page loads: the package's
 * package.json, README, source maps and the rest are not served.
 */
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js']);

const GUIDE = path.resolve(import.meta.dirname, '../docs/partner-guide.md');
const SDK_GUIDE = path.resolve(import.meta.dirname, '../sdk/README.md');

// The prose rules apply inside <main> only: the reference page renders Swagger UI outside it, whose own
// styles (e.g. the white text of its version badges on their grey pill) a page-wide `pre` rule would undo.
const STYLE = `
  body { font: 16px/1.55 system-ui, sans-serif; margin: 0; color: #1f2328; }
  nav { padding: 12px 24px; background: #1b2838; }
  nav a { color: #fff; margin-right: 24px; text-decoration: none; font-weight: 600; }
  main { max-width: 960px; margin: 0 auto; padding: 8px 24px 48px; }
  main pre, main code { font: 14px/1.45 ui-monospace, monospace; background: #f3f4f6; }
  main pre { padding: 12px; overflow-x: auto; }
  main table { border-collapse: collapse; margin: 12px 0; }
  main th, main td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; vertical-align: top; }
`;

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

/** Markdown of the repository as a page. It is ours, so its HTML is trusted as written. */
function renderMarkdown(title: string, markdown: string): string {
  const html = new Marked(gfmHeadingId()).parse(markdown, { async: false });
  return page(title, '', `<main>${html}</main>`);
}

/** The partner guide as HTML. */
export function renderGuide(markdown = readFileSync(GUIDE, 'utf8')): string {
  return renderMarkdown('Partner Reporting API: partner guide', markdown);
}

/** The SDK's guide as HTML: the README its package carries. */
export function renderSdkGuide(markdown = readFileSync(SDK_GUIDE, 'utf8')): string {
  return renderMarkdown('Partner Reporting API: TypeScript SDK', markdown);
}

// The reference page points "Try it out" at the server it is served from: the document's own server is
// the address a partner was given (a variable defaulting to a local `npm start`), listed second.
const REFERENCE = page(
  'Partner Reporting API: reference',
  '<link rel="stylesheet" href="/docs/assets/swagger-ui.css">',
  `<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>
  fetch('/partner/v1/openapi.json')
    .then((response) => response.json())
    .then((spec) => {
      spec.servers = [{ url: window.location.origin, description: 'This server' }, ...(spec.servers || [])];
      SwaggerUIBundle({ spec, dom_id: '#reference', deepLinking: true });
    });
</script>`,
);

export function docsRouter(): Router {
  const guide = renderGuide();
  const sdkGuide = renderSdkGuide();
  const router = express.Router();
  router.get('/docs', (_req, res) => {
    res.type('html').send(guide);
  });
  router.get('/docs/sdk', (_req, res) => {
    res.type('html').send(sdkGuide);
  });
  router.get('/docs/reference', (_req, res) => {
    res.type('html').send(REFERENCE);
  });
  router.get('/docs/assets/:file', (req, res, next) => {
    // Anything else under /docs/assets falls through to the API's 404 envelope.
    if (!ASSETS.has(req.params.file)) return next();
    res.sendFile(req.params.file, { root: SWAGGER_UI, maxAge: '1h' });
  });
  return router;
}
