import type { Request, Response } from 'express';
import type { AccessRecord } from './access-log';
import { createRequestContext, type RequestContext, type Services } from './context';
import { ERROR_CATALOGUE, ERROR_MESSAGE, type PartnerErrorCode, partnerCodeOf } from './errors';

/** Builds a request's context from an express request, for both HTTP doors, and logs their failures. */
export type HttpContextFactory = ((req: Request, res: Response) => RequestContext) & {
  logFailure(req: Request, error: unknown): void;
};

export function httpContextFactory(services: Services): HttpContextFactory {
  const factory = (req: Request, res: Response) => {
    const access = res.locals.access as AccessRecord | undefined;
    return createRequestContext(services, {
      apiKey: req.get('x-partner-api-key'),
      clientAddress: access?.client ?? clientAddressOf(req) ?? 'unknown',
      requestId: String(res.locals.requestId),
      signal: res.locals.signal as AbortSignal | undefined,
      access,
    });
  };
  // D-12, D-22: the log of a failed request carries its request id and the real cause; the response
  // never does. A refusal's code and reason go on the request's access line; an internal error also gets
  // one bounded error line (server/log-errors.ts), without the path (it holds partner codes). A batch
  // keeps its first failure. A request the client abandoned is no error: its access line says so.
  factory.logFailure = (req: Request, error: unknown) => {
    const locals = req.res?.locals;
    const access = locals?.access as AccessRecord | undefined;
    if (access?.code !== undefined) return;
    const code = partnerCodeOf(error);
    if (access) {
      access.code = code;
      access.cause = causeOf(error);
    }
    if (code === 'PARTNER_API_INTERNAL_ERROR' && !locals?.abandoned)
      services.log.error('request failed', {
        requestId: access?.requestId,
        traceId: access?.traceId,
        operation: access?.operation,
        code,
        error,
      });
  };
  return factory;
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
 * Why a call was refused, for the log (D-12, D-22): for parameters, each one's name and the broken
 * rule (zod's issue code and message, which state the rule, not the value); otherwise the message of
 * the partner error's own cause (a rule across parameters, the guard), else the reason of its code
 * (the catalogue's `reason`), cut short. Never the key. A wrapper's message above the partner error is not the
 * cause: trpc-to-openapi wraps ours in its own "Internal server error" (server/errors.ts partnerCodeOf).
 */
export function causeOf(error: unknown): unknown {
  let message: string | undefined;
  let code: PartnerErrorCode | undefined;
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 6; depth++) {
    const { issues, cause, message: text } = current as { issues?: Issue[]; cause?: unknown; message?: unknown };
    if (Array.isArray(issues))
      return issues.slice(0, 5).map((issue) => ({
        parameter: issue.path?.map(String).join('.') || undefined,
        rule: issue.code,
        message: issue.message?.slice(0, 120),
      }));
    const partnerCode = (current as { partnerCode?: unknown }).partnerCode;
    if (typeof partnerCode === 'string' && code === undefined) {
      // What wrapped the partner error says nothing of why it was thrown.
      code = partnerCode as PartnerErrorCode;
      message = undefined;
    } else if (typeof text === 'string' && text !== ERROR_MESSAGE) {
      message = text.slice(0, 120);
    }
    current = cause;
  }
  return message ?? ERROR_CATALOGUE[code ?? partnerCodeOf(error)].reason;
}
