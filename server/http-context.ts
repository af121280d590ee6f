import type { Request, Response } from 'express';
import { createRequestContext, type RequestContext, type Services } from './context';
import { partnerCodeOf } from './errors';

/** Builds a request's context from an express request, for both HTTP doors, and logs their failures. */
export type HttpContextFactory = ((req: Request, res: Response) => RequestContext) & {
  logFailure(req: Request, error: unknown): void;
};

export function httpContextFactory(services: Services): HttpContextFactory {
  const factory = (req: Request, res: Response) =>
    createRequestContext(services, {
      apiKey: req.get('x-partner-api-key'),
      clientAddress: req.ip ?? req.socket.remoteAddress ?? 'unknown',
      requestId: String(res.locals.requestId),
    });
  // D-12: the log line of a failed request carries its request id and the real cause; the response never does.
  factory.logFailure = (req: Request, error: unknown) => {
    const code = partnerCodeOf(error);
    const fields = { requestId: req.res?.locals.requestId, code, path: pathOf(req) };
    if (code === 'PARTNER_API_INTERNAL_ERROR') services.log.error('request failed', { ...fields, error });
    else services.log.debug('request refused', fields);
  };
  return factory;
}

/** The path as the client sent it, without the query (express rewrites req.path under a mount). */
export function pathOf(req: Request) {
  return req.originalUrl.split('?')[0] ?? req.originalUrl;
}
