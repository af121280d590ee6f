import type { NextFunction, Request, Response } from 'express';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import type { AppRouter } from '../routers';
import { type ErrorEnvelope, errorEnvelope, httpStatusOf } from './errors';
import type { HttpContextFactory } from './http-context';
import { restRoutes } from './routes';

/**
 * The REST facade (trpc-to-openapi) at the /partner/v1 GET paths. The library always writes its own
 * error body ({message, code, issues, …}; mcampa/trpc-to-openapi#168), so this door replaces any body of
 * a status ≥ 400 with the partner envelope the error formatter put under `data.partner` (D-12). Unknown
 * paths fall through to `next()` and the app's 404 catch-all.
 */
export function restFacade(appRouter: AppRouter, createContext: HttpContextFactory) {
  const handler = createOpenApiNodeHttpHandler({
    router: appRouter,
    createContext: ({ req, res }) => createContext(req as Request, res as Response),
    responseMeta: ({ ctx, errors }) => ({
      status: errors[0] ? httpStatusOf(errors[0]) : 200,
      headers: { ...ctx?.responseHeaders },
    }),
    onError: ({ error, req }) => createContext.logFailure(req as Request, error),
  });
  const routes = restRoutes(appRouter);
  return (req: Request, res: Response, next: NextFunction) => {
    const path = decodedPath(req.path);
    if (!routes.some((route) => route.pattern.test(path))) return next();
    req.url = `${path}${req.url.slice(req.path.length)}`;
    replaceErrorBodies(res);
    return handler(req, res, next);
  };
}

/**
 * The path with %-encoded segments decoded (`chicken%2Dhouse` is `chicken-house`, RFC 3986), as the tRPC
 * transport receives them. trpc-to-openapi hands path parameters over still encoded (upstream PR
 * mcampa/trpc-to-openapi#166). A segment is decoded only into the URL-safe characters public codes are
 * made of; anything else cannot name a resource (db/schema/columns.ts PUBLIC_CODE) and stays as it came.
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

function replaceErrorBodies(res: Response) {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (res.statusCode >= 400 && typeof chunk === 'string') {
      chunk = JSON.stringify(partnerEnvelopeIn(chunk, res.statusCode));
    }
    return end(chunk, ...rest);
  }) as Response['end'];
}

function partnerEnvelopeIn(body: string, status: number): ErrorEnvelope {
  try {
    const parsed = JSON.parse(body) as { data?: { partner?: ErrorEnvelope } };
    if (parsed.data?.partner) return parsed.data.partner;
  } catch {
    // not JSON: fall through to the status's generic envelope
  }
  return errorEnvelope(status === 404 ? 'PARTNER_API_NOT_FOUND' : 'PARTNER_API_INTERNAL_ERROR');
}
