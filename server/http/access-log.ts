import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { causeChain } from '../../db/failure';
import type { Logger } from '../logger';
import type { AccessRecord } from '../trpc/context';
import { ERROR_CATALOGUE, partnerCodeOf } from '../trpc/errors';
import { metrics } from '../trpc/metrics';
import { type TraceParent, tracing } from '../trpc/tracing';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MAX_PATH = 200;

/** The status logged and counted for a request the client abandoned before its answer (nginx's 499). */
const CLIENT_CLOSED = 499;

/** D-12: the request id on every response; D-22: one access line a request, an abandoned one as 499. */
export function requestIdAndAccessLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const offered = req.get('x-request-id');
    const requestId = offered && REQUEST_ID.test(offered) ? offered : randomUUID();
    res.setHeader('x-request-id', requestId);
    const parent = parseTraceparent(req.headers.traceparent as string | undefined);
    const traced = tracing;
    const span = traced?.startHttpSpan(req.method, parent);
    const access: AccessRecord = {
      requestId,
      traceId: span?.traceId ?? parent?.traceId ?? randomUUID().replaceAll('-', ''),
      client: req.ip ?? req.socket.remoteAddress,
    };
    res.locals.requestId = requestId;
    res.locals.access = access;
    const started = process.hrtime.bigint();
    const bytesBefore = req.socket.bytesWritten;
    res.once('close', () => {
      const abandoned = !res.writableFinished;
      const status = abandoned ? CLIENT_CLOSED : res.statusCode;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const path = pathOf(req);
      const operation = access.operation ?? routeLabel(path, status);
      metrics?.requestDuration.observe({ operation, status }, seconds);
      if (span) traced?.endHttpSpan(span, operation, status);
      log.info(
        {
          requestId,
          traceId: access.traceId,
          operation,
          method: req.method,
          path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path,
          status,
          durationMs: Math.round(seconds * 1e6) / 1e3,
          // What this response put on the wire, headers included (the connection may carry more).
          bytes: req.socket.bytesWritten - bytesBefore,
          client: access.client,
          partnerId: access.partnerId,
          keyPrefix: access.keyPrefix,
          // D-12: a refused or failed request's code and its reason, never a value.
          code: access.code,
          cause: abandoned ? 'client closed the connection' : access.cause,
          abandoned: abandoned || undefined,
        },
        'request',
      );
    });
    if (span && traced) traced.runInSpan(span, next);
    else next();
  };
}

/** The operation of a request no procedure took: a fixed label, never the path, so metrics stay bounded. */
function routeLabel(path: string, status: number): string {
  if (path === '/healthz') return 'healthz';
  if (path === '/readyz') return 'readyz';
  if (path === '/partner/v1/openapi.json') return 'openapi';
  if (path === '/docs' || path.startsWith('/docs/')) return 'docs';
  if (path.startsWith('/partner/v1/trpc/') && status !== 404) return 'trpc';
  return status === 404 ? 'not_found' : 'other';
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_PARENT = '0'.repeat(16);

/** The caller's trace, if its `traceparent` is valid per W3C Trace Context (D-22); else a new trace starts. */
export function parseTraceparent(header: string | undefined): TraceParent | undefined {
  if (!header || header.length < 55 || header.length > 512) return undefined;
  const match = TRACEPARENT.exec(header);
  if (!match) return undefined;
  const [, version, traceId, parentId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (!traceId || !parentId || !flags || traceId === ZERO_TRACE || parentId === ZERO_PARENT) return undefined;
  return { traceId, parentId, flags: Number.parseInt(flags, 16) };
}

/** D-12, D-22: a refusal's code and reason go on the access line, an internal error also on an error line. */
export function logFailure(log: Logger, req: Request, error: unknown) {
  const locals = req.res?.locals;
  const access = locals?.access as AccessRecord | undefined;
  if (access?.code !== undefined) return;
  const code = partnerCodeOf(error);
  if (access) {
    access.code = code;
    access.cause = causeOf(error);
  }
  if (code === 'PARTNER_API_INTERNAL_ERROR' && !locals?.abandoned) {
    const { requestId, traceId, operation } = access ?? {};
    log.error({ requestId, traceId, operation, code, error }, 'request failed');
  }
}

/** The path as the client sent it, without the query (express rewrites req.path under a mount). */
export function pathOf(req: Request) {
  return req.originalUrl.split('?')[0] ?? req.originalUrl;
}

type Issue = { path?: PropertyKey[]; code?: string; message?: string };

/** PostgreSQL's bounds on a statement (D-20, D-21) by SQLSTATE: the rule a failed call ran into. */
const DATABASE_BOUNDS: Record<string, string> = {
  '57014': 'the statement ran past statement_timeout',
  '55P03': 'the statement waited past lock_timeout',
};

/** Why a call was refused, for the access line: the rule it broke, never a value (D-12, D-22). */
function causeOf(error: unknown): unknown {
  for (const current of causeChain(error)) {
    const issues = current.issues as Issue[] | undefined;
    if (Array.isArray(issues))
      return issues.slice(0, 5).map((issue) => ({
        parameter: issue.path?.map(String).join('.') || undefined,
        rule: issue.code,
        message: issue.message?.slice(0, 120),
      }));
    if (typeof current.code === 'string' && current.code in DATABASE_BOUNDS) return DATABASE_BOUNDS[current.code];
    if (typeof current.partnerCode === 'string') {
      const own = current.cause instanceof Error ? current.cause.message : undefined;
      if (own) return own.slice(0, 120);
      break;
    }
  }
  return ERROR_CATALOGUE[partnerCodeOf(error)].reason;
}
