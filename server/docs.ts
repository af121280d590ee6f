import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';

// GET /docs (D-15): Swagger UI over /partner/v1/openapi.json, served from the swagger-ui-dist package so
// it works offline. The package folder is resolved, not required: requiring it loads the browser bundle.
const assets = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Partner Reporting API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>
    SwaggerUIBundle({ url: '/partner/v1/openapi.json', dom_id: '#docs', deepLinking: true });
  </script>
</body>
</html>
`;

export function docsRouter(): Router {
  const router = express.Router();
  router.get('/docs', (_req, res) => {
    res.type('html').send(PAGE);
  });
  router.use('/docs/assets', express.static(assets, { index: false, fallthrough: true }));
  return router;
}
