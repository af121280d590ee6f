import type { Request, Response } from 'express';
import type { AccessRecord } from './access-log';
import { createRequestContext, type RequestContext, type Services } from './context';
import { causeChain, ERROR_CATALOGUE, partnerCodeOf } from './errors';
import type { Logger } from './logger';

/** A request's context from an express request, for REST and the tRPC transport. */
export function httpContext(services: Services, req: Request, res: Response): RequestContext {
  const access = res.locals.access as AccessRecord | undefined;
  return createRequestContext(services, {
    apiKey: req.get('x-partner-api-key'),
    clientAddress: access?.client ?? 'unknown',
    requestId: String(res.locals.requestId),
    signal: res.locals.signal as AbortSignal | undefined,
    access,
  });
}

/**
 * D-12, D-22: the log of a failed request carries its request id and the real cause; the response never
 * does. A refusal's code and reason go on the request's access line; an internal error also gets one
 * bounded error line (server/log-errors.ts), without the path (it holds partner codes). A batch keeps its
 * first failure. A request the client abandoned is no error: its access line says so.
 */
export function logFailure(log: Logger, req: Request, error: unknown) {
  const locals = req.res?.locals;
  const access = locals?.access as AccessRecord | undefined;
  if (access?.code !== undefined) return;
  const code = partnerCodeOf(error);
  if (access) {
    access.code = code;
    access.cause = causeOf(error);
  }
  if (code === 'PARTNER_API_INTERNAL_ERROR' && !locals?.abandoned)
    log.error('request failed', {
      requestId: access?.requestId,
      traceId: access?.traceId,
      operation: access?.operation,
      code,
      error,
    });
}

/** The client's address: express's req.ip (X-Forwarded-For behind trusted proxies), else the socket's peer. */
export function clientAddressOf(req: Request): string | undefined {
  return req.ip ?? req.socket.remoteAddress;
}

/** The path as the client sent it, without the query (express rewrites req.path under a mount). */
export function pathOf(req: Request) {
  return req.originalUrl.split('?')[0] ?? req.originalUrl;
}

type Issue = { path?: PropertyKey[]; code?: string; message?: string };

/**
 * Why a call was refused, for the access line (D-12, D-22): the rule it broke, never a value. For
 * parameters, each one's name and zod's issue code and message (they state the rule); else the message
 * of the cause our code gave the partner error (a rule across parameters, the guard, the deadline); else
 * the reason of its code (the catalogue's). Other errors' messages are not used: they may quote what
 * was sent (a tRPC input that is not JSON) or a row; an internal error's own line has its cause.
 */
export function causeOf(error: unknown): unknown {
  for (const current of causeChain(error)) {
    const issues = current.issues as Issue[] | undefined;
    if (Array.isArray(issues))
      return issues.slice(0, 5).map((issue) => ({
        parameter: issue.path?.map(String).join('.') || undefined,
        rule: issue.code,
        message: issue.message?.slice(0, 120),
      }));
    if (typeof current.partnerCode === 'string') {
      const own = current.cause instanceof Error ? current.cause.message : undefined;
      if (own) return own.slice(0, 120);
      break;
    }
  }
  return ERROR_CATALOGUE[partnerCodeOf(error)].reason;
}
