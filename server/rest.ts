import type { NextFunction, Request, Response } from 'express';
import { createOpenApiExpressMiddleware } from 'trpc-to-openapi';
import type { AppRouter } from '../routers';
import type { Services } from './context';
import { httpStatusOf } from './errors';
import { httpContext, logFailure } from './http-context';
import { restRoutes } from './routes';
import { partnerErrorBody } from './workarounds/trpc-to-openapi-error-body';

/**
 * The REST API: trpc-to-openapi's express middleware serves the router's `meta.openapi` GET paths.
 * The status of an answer and its headers (rate limit, a next page's Link, Retry-After) come from
 * `responseMeta`, the body from the procedure or, for an error, the error formatter's envelope (D-12).
 */
export function restApi(router: AppRouter, services: Services) {
  const patterns = restRoutes(router).map((route) => route.pattern);
  const adapter = createOpenApiExpressMiddleware({
    router,
    createContext: ({ req, res }) => httpContext(services, req, res),
    onError: ({ error, req }) => logFailure(services.log, req, error),
    responseMeta: ({ ctx, errors }) => ({
      status: errors[0] ? httpStatusOf(errors[0]) : 200,
      headers: ctx?.responseHeaders,
    }),
  });
  // The adapter matches paths ignoring case and a trailing slash, resolves dot segments and leaves path
  // parameters %-encoded. So only a path that, its segments decoded, is exactly one of the API's reaches
  // it; any other goes on to the app's 404 envelope (D-12). The app takes only GET requests (server/app.ts).
  return (req: Request, res: Response, next: NextFunction) => {
    const end = req.url.indexOf('?');
    const path = decodedPath(end === -1 ? req.url : req.url.slice(0, end));
    if (!patterns.some((pattern) => pattern.test(path))) return next();
    req.url = end === -1 ? path : path + req.url.slice(end);
    partnerErrorBody(res);
    return adapter(req, res);
  };
}

/**
 * The path with %-encoded segments decoded (`chicken%2Dhouse` is `chicken-house`, RFC 3986), as the tRPC
 * transport receives them. A segment is decoded only into the URL-safe characters public codes are made
 * of; anything else cannot name a resource (db/schema/columns.ts PUBLIC_CODE) and stays as it came.
 */
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
