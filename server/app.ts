import { randomUUID } from 'node:crypto';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import { sql } from 'drizzle-orm';
import express, { type NextFunction, type Request, type Response } from 'express';
import { appRouter } from '../routers';
import type { Services } from './context';
import { docsRouter } from './docs';
import { errorEnvelope, httpStatusOf, type PartnerErrorCode } from './errors';
import { httpContextFactory, pathOf } from './http-context';
import { openApiDocument } from './openapi';
import { restFacade } from './rest';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The express app: request id and access log, health, docs, the tRPC transport, the REST facade, 404. */
export function createApp(services: Services, options: { trustProxy?: number | string | undefined } = {}) {
  const app = express();
  // The client address (refused-key budget, D-14) comes from X-Forwarded-For only behind trusted proxies.
  app.set('trust proxy', options.trustProxy ?? false);
  app.disable('x-powered-by');
  app.set('etag', false);
  // Repeated parameters must stay arrays (so they fail validation, D-11) and `a[]=` must not nest.
  app.set('query parser', 'simple');

  app.use(requestIdAndAccessLog(services));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await services.db.execute(sql`select 1`);
      res.json({ status: 'ok' });
    } catch (error) {
      services.log.error('readiness check failed', { requestId: res.locals.requestId, error });
      res.status(503).json({ status: 'unavailable' });
    }
  });

  const document = openApiDocument();
  app.get('/partner/v1/openapi.json', (_req, res) => {
    res.json(document);
  });
  app.use(docsRouter());

  const createContext = httpContextFactory(services);

  // D-18: the SDK's transport, behind the same middleware (key, limit, brand scope) and error codes.
  const trpcTransport = createExpressMiddleware({
    router: appRouter,
    createContext: ({ req, res }) => createContext(req, res),
    onError: ({ error, req }) => createContext.logFailure(req, error),
    responseMeta: ({ ctx, errors, info }) => {
      const headers = { ...ctx?.responseHeaders };
      // A single call answers with its partner status (a POST to a query is 404, not 405; D-12).
      const single = errors.length === 1 && (info?.calls.length ?? 0) <= 1;
      return single && errors[0] ? { status: httpStatusOf(errors[0]), headers } : { headers };
    },
  });
  // Every procedure is a query, which the client sends as GET; any other method is 404 like REST (D-12).
  app.use('/partner/v1/trpc', (req, res, next) => (req.method === 'GET' ? trpcTransport(req, res, next) : next()));

  app.use(restFacade(appRouter, createContext));

  // Any other path, and any method but GET on a path of the API, with or without a key (D-12).
  app.use((_req, res) => sendError(res, 'PARTNER_API_NOT_FOUND'));

  // Last resort: nothing unforeseen reaches a response; the cause is logged with the request id.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    services.log.error('unhandled error', { requestId: res.locals.requestId, path: pathOf(req), error });
    if (res.headersSent) return res.end();
    sendError(res, 'PARTNER_API_INTERNAL_ERROR');
  });

  return app;
}

function sendError(res: Response, code: PartnerErrorCode) {
  const body = errorEnvelope(code);
  // The same content type as the REST facade's answers (express would add a charset).
  res.status(body.status_code).setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

/** D-12 request id (the caller's if well-formed) on every response; D-17 one access-log line a request. */
function requestIdAndAccessLog(services: Services) {
  return (req: Request, res: Response, next: NextFunction) => {
    const offered = req.get('x-request-id');
    const requestId = offered && REQUEST_ID.test(offered) ? offered : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      services.log.info('request', {
        requestId,
        method: req.method,
        path: pathOf(req),
        status: res.statusCode,
        durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
      });
    });
    next();
  };
}
