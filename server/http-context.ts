import type { Request, Response } from 'express';
import { createRequestContext, type RequestContext, type Services } from './context';
import { ERROR_MESSAGE, partnerCodeOf } from './errors';

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
      signal: res.locals.signal as AbortSignal | undefined,
    });
  // D-12: the log of a failed request carries its request id and the real cause; the response never
  // does. A refusal's code and cause go on the request's access-log line; an internal error is logged
  // whole. A batch keeps its first failure.
  factory.logFailure = (req: Request, error: unknown) => {
    const code = partnerCodeOf(error);
    if (code === 'PARTNER_API_INTERNAL_ERROR')
      services.log.error('request failed', { requestId: req.res?.locals.requestId, code, path: pathOf(req), error });
    if (req.res && !req.res.locals.failure) req.res.locals.failure = { code, cause: causeOf(error) };
  };
  return factory;
}

/** The path as the client sent it, without the query (express rewrites req.path under a mount). */
export function pathOf(req: Request) {
  return req.originalUrl.split('?')[0] ?? req.originalUrl;
}

type Issue = { path?: PropertyKey[]; code?: string; message?: string };

/**
 * Why a call was refused, for the log (D-12, D-22): for parameters, each one's name and the broken
 * rule (zod's issue code and message, which state the rule, not the value); otherwise the deepest cause's
 * message (a rule across parameters, the guard, a framework refusal), cut short. Never the key.
 */
export function causeOf(error: unknown): unknown {
  let message: string | undefined;
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 6; depth++) {
    const { issues, cause, message: text } = current as { issues?: Issue[]; cause?: unknown; message?: unknown };
    if (Array.isArray(issues))
      return issues.slice(0, 5).map((issue) => ({
        parameter: issue.path?.map(String).join('.') || undefined,
        rule: issue.code,
        message: issue.message?.slice(0, 120),
      }));
    if (typeof text === 'string' && text !== ERROR_MESSAGE) message = text.slice(0, 120);
    current = cause;
  }
  return message;
}
