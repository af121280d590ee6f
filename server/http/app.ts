import { createExpressMiddleware } from '@trpc/server/adapters/express';
import { sql } from 'drizzle-orm';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createOpenApiExpressMiddleware } from 'trpc-to-openapi';
import { type AppRouter, appRouter } from '../../routers';
import { type AccessRecord, createRequestContext, type RequestContext } from '../trpc/context';
import { ERROR_CATALOGUE, errorEnvelope, httpStatusOf, type PartnerErrorCode } from '../trpc/errors';
import { checkKeyAndLimit, untilAborted } from '../trpc/procedures';
import type { Services } from '../trpc/services';
import { logFailure, pathOf, requestIdAndAccessLog } from './access-log';
import { docsRouter } from './docs';
import { openApiDocument } from './openapi';
import { restRoutes } from './routes';
import { conditionalOnResponse } from './workarounds/trpc-not-modified';
import { partnerErrorBody } from './workarounds/trpc-to-openapi-error-body';

/** The express app, with the responses it is writing (a drain tells them to close their connection). */
export type App = Express & { inProgress: Set<Response>; closing: boolean };

/** A tRPC batch holds at most this many calls (D-20). */
export const MAX_BATCH_CALLS = 10;

/** The express app: request id and access log, GET only, the REST API, health, docs, the tRPC transport, 404. */
export function createApp(
  services: Services,
  options: {
    trustProxy?: number | string | undefined;
    /** D-20: a request still unanswered then gets the 500 envelope; its statements run out under their own bounds. */
    deadlineMs?: number;
    /** D-20: true from the stop signal on; `/readyz` then answers 503 so balancers stop routing here. */
    draining?: () => boolean;
  } = {},
): App {
  const app = Object.assign(express(), { inProgress: new Set<Response>(), closing: false });
  // The client address (refused-key budget, D-14) comes from X-Forwarded-For only behind trusted proxies.
  app.set('trust proxy', options.trustProxy ?? false);
  app.disable('x-powered-by');
  // Only the exact spelling of a path is served (`/DOCS` and `/docs/` are not `/docs`, D-12).
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('etag', false);
  // Repeated parameters must stay arrays (so they fail validation, D-11) and `a[]=` must not nest.
  app.set('query parser', 'simple');

  app.use(requestIdAndAccessLog(services.log));
  app.use(requestLifetime(app, options.deadlineMs ?? 10_000));
  app.use(wellFormedRequests);
  // The service answers GET only: any other method, HEAD and OPTIONS included, on any path is 404 (D-12).
  app.use((req, res, next) => (req.method === 'GET' ? next() : sendError(res, 'PARTNER_API_NOT_FOUND')));
  // The partner reads first: their paths are no other route's, and each layer passed costs every call.
  app.use(restApi(appRouter, services));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  // D-20: 503 unless the primary's control client (D-21, D-23) answers within 1 s.
  app.get('/readyz', async (req, res) => {
    if (options.draining?.()) return void res.status(503).json({ status: 'draining' });
    const signal = AbortSignal.any([res.locals.signal as AbortSignal, AbortSignal.timeout(READY_WITHIN_MS)]);
    try {
      await untilAborted(signal, () => services.control.execute(sql`select 1`));
      res.json({ status: 'ok' });
    } catch (error) {
      req.log.error({ error }, 'readiness check failed');
      res.status(503).json({ status: 'unavailable' });
    }
  });

  app.use(docsRouter(openApiDocument));
  // D-18: the SDK's transport, behind the same middleware (key, limit, brand scope) and error codes.
  const trpcTransport = createExpressMiddleware({
    router: appRouter,
    // D-20: more calls in one request is 400 before anything runs; the rest are checked together, once.
    maxBatchSize: MAX_BATCH_CALLS,
    createContext: ({ req, res, info }) => {
      const ctx = httpContext(services, req, res);
      // A batch is one request of several procedures: one bounded label for its metrics and access line.
      if (info.calls.length > 1 && ctx.access) ctx.access.operation = 'trpc.batch';
      // D-27: a single call has an ETag and may answer 304; a batch has neither.
      if (info.calls.length <= 1) ctx.conditional = conditionalOnResponse(res, req.get('if-none-match'));
      ctx.authenticated = checkKeyAndLimit(ctx, Math.max(1, info.calls.length));
      // Each call awaits it; a refusal answers every call and is no unhandled rejection.
      ctx.authenticated.catch(() => undefined);
      return ctx;
    },
    onError: ({ error, req }) => logFailure(req, error),
    responseMeta: ({ ctx, errors, info }) => {
      const headers = { ...ctx?.responseHeaders };
      // A single call answers with its partner status; a batch, with tRPC's own (207 when mixed).
      const single = errors.length === 1 && (info?.calls.length ?? 0) <= 1;
      return single && errors[0] ? { status: httpStatusOf(errors[0]), headers } : { headers };
    },
  });
  // Only the exact spelling is the transport: express mounts ignore case and empty segments.
  app.use('/partner/v1/trpc', (req, res, next) =>
    TRPC_PATH.test(pathOf(req)) ? trpcTransport(req, res, next) : next(),
  );
  // Any other path, with or without a key (D-12).
  app.use((_req, res) => sendError(res, 'PARTNER_API_NOT_FOUND'));
  // Last resort: nothing unforeseen reaches a response; the cause is logged with the request id.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const access = res.locals.access as AccessRecord | undefined;
    if (access) access.code ??= 'PARTNER_API_INTERNAL_ERROR';
    req.log.error({ traceId: access?.traceId, error }, 'unhandled error');
    if (res.headersSent) return res.end();
    sendError(res, 'PARTNER_API_INTERNAL_ERROR');
  });
  return app;
}

/** A request's context from an express request, for REST and the tRPC transport. */
function httpContext(services: Services, req: Request, res: Response): RequestContext {
  const access = res.locals.access as AccessRecord | undefined;
  return createRequestContext(services, {
    apiKey: req.get('x-partner-api-key'),
    clientAddress: access?.client ?? 'unknown',
    requestId: String(req.id),
    signal: res.locals.signal as AbortSignal | undefined,
    access,
  });
}

function sendError(res: Response, code: PartnerErrorCode) {
  const access = res.locals.access as AccessRecord | undefined;
  if (access && access.code === undefined) {
    access.code = code;
    access.cause = ERROR_CATALOGUE[code].reason;
  }
  const body = errorEnvelope(code);
  // The same content type as the REST API's answers (express would add a charset).
  res.status(body.status_code).setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

/** The transport's path: procedure names (`brands.list`), comma-separated in a batch. */
const TRPC_PATH = /^\/partner\/v1\/trpc\/[A-Za-z]+(\.[A-Za-z]+)*(,[A-Za-z]+(\.[A-Za-z]+)*)*$/;

const READY_WITHIN_MS = 1_000;

/** D-20: each request's signal, aborted at its deadline or when its client goes; and its place for a drain. */
function requestLifetime(app: App, deadlineMs: number) {
  return (_req: Request, res: Response, next: NextFunction) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`deadline of ${deadlineMs} ms passed`)), deadlineMs);
    res.locals.signal = controller.signal;
    if (app.closing) res.setHeader('Connection', 'close');
    app.inProgress.add(res);
    res.on('close', () => {
      app.inProgress.delete(res);
      clearTimeout(timer);
      if (res.writableFinished) return;
      // The client's choice, not a fault: logged at info on the access line, not as an error (D-22).
      res.locals.abandoned = true;
      controller.abort(new Error('client closed the connection'));
    });
    next();
  };
}

/** 400 for an HTTP/1.1 request without Host (RFC 9112 §3.2) or an Expect other than 100-continue (RFC 9110 §10.1.1). */
function wellFormedRequests(req: Request, res: Response, next: NextFunction) {
  const expectation = req.headers.expect;
  const malformed =
    (req.httpVersion === '1.1' && req.headers.host === undefined) ||
    (expectation !== undefined && expectation.toLowerCase() !== '100-continue');
  return malformed ? sendError(res, 'PARTNER_API_INVALID_PARAMETER') : next();
}

/** The REST API: trpc-to-openapi's express middleware; status and headers from `responseMeta` (D-12). */
function restApi(router: AppRouter, services: Services) {
  const patterns = restRoutes(router).map((route) => route.pattern);
  const adapter = createOpenApiExpressMiddleware({
    router,
    createContext: ({ req, res }) => {
      const ctx = httpContext(services, req, res);
      ctx.conditional = { ifNoneMatch: req.get('if-none-match'), notModified: false };
      return ctx;
    },
    onError: ({ error, req }) => {
      if (req.res) partnerErrorBody(req.res);
      logFailure(req, error);
    },
    // D-27: a 304 has no body; Node drops the one the adapter writes.
    responseMeta: ({ ctx, errors }) => ({
      status: errors[0] ? httpStatusOf(errors[0]) : ctx?.conditional?.notModified ? 304 : 200,
      headers: ctx?.responseHeaders,
    }),
  });
  // The adapter ignores case and a trailing slash: only a path exactly one of the API's reaches it (D-12).
  return (req: Request, res: Response, next: NextFunction) => {
    const end = req.url.indexOf('?');
    const path = decodedPath(end === -1 ? req.url : req.url.slice(0, end));
    if (!patterns.some((pattern) => pattern.test(path))) return next();
    req.url = end === -1 ? path : path + req.url.slice(end);
    return adapter(req, res);
  };
}

/** The path with segments decoded as the tRPC transport gets them, but only into URL-safe characters. */
function decodedPath(path: string): string {
  if (!path.includes('%')) return path;
  return path
    .split('/')
    .map((segment) => {
      try {
        const decoded = decodeURIComponent(segment);
        return /^[A-Za-z0-9_.~-]*$/.test(decoded) ? decoded : segment;
      } catch {
        return segment;
      }
    })
    .join('/');
}
