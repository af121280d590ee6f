import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, type TextMapGetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { NextFunction, Request, Response } from 'express';
import { pinoHttp } from 'pino-http';
import { causeChain } from '../../db/failure';
import type { Logger } from '../logger';
import type { AccessRecord } from '../trpc/context';
import { ERROR_CATALOGUE, partnerCodeOf } from '../trpc/errors';
import { metrics } from '../trpc/metrics';
import { tracing } from '../trpc/tracing';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MAX_PATH = 200;

/** The status logged and counted for a request the client abandoned before its answer (nginx's 499). */
const CLIENT_CLOSED = 499;

/** D-22: a valid W3C `traceparent` makes the caller's trace this request's; an invalid one is ignored. */
const traceContext = new W3CTraceContextPropagator();

/** `traceparent` alone: `tracestate` is text the caller wrote, and no span carries what a caller sent (D-22). */
const traceparentOnly: TextMapGetter<IncomingHttpHeaders> = {
  keys: () => ['traceparent'],
  get: (headers, key) => (key === 'traceparent' ? headers.traceparent : undefined),
};

/** When the request arrived, and how much its connection had carried by then. */
type Arrival = { at: bigint; bytesWritten: number };

/** D-12: the request id on every response; D-22: one access line a request (pino-http), an abandoned one as 499. */
export function requestIdAndAccessLog(log: Logger) {
  const accessLog = pinoHttp<Request, Response>({
    logger: log,
    genReqId: requestIdOf,
    // The request is bound to req.log as its id alone, under `requestId`: every line it logs carries the id,
    // never its headers (they hold the key, D-4). One child logger a request (quietReqLogger would make two).
    customAttributeKeys: { req: 'requestId' },
    wrapSerializers: false,
    serializers: { requestId: (request: Request) => request.id },
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
    customSuccessObject: accessLine,
    customErrorObject: accessLine,
  });
  return (req: Request, res: Response, next: NextFunction) => {
    accessLog(req, res);
    const parent = traceContext.extract(ROOT_CONTEXT, req.headers, traceparentOnly);
    const traced = tracing;
    const span = traced?.startHttpSpan(req.method, parent);
    const access: AccessRecord = {
      traceId: span?.traceId ?? trace.getSpanContext(parent)?.traceId ?? randomUUID().replaceAll('-', ''),
      client: req.ip ?? req.socket.remoteAddress,
    };
    const arrival: Arrival = { at: process.hrtime.bigint(), bytesWritten: req.socket.bytesWritten };
    res.locals.access = access;
    res.locals.arrival = arrival;
    // With metrics and tracing off, nothing waits for the request's end but the access line (D-22).
    if (metrics || span)
      res.once('close', () => {
        const { operation, status } = outcomeOf(req, res);
        metrics?.requestDuration.observe({ operation, status }, secondsSince(arrival));
        if (span) traced?.endHttpSpan(span, operation, status);
      });
    if (span && traced) traced.runInSpan(span, next);
    else next();
  };
}

/** D-12: the caller's `x-request-id` if it is one we accept, else a new one; set on the response. */
function requestIdOf(req: Request, res: Response): string {
  const offered = req.get('x-request-id');
  const requestId = offered && REQUEST_ID.test(offered) ? offered : randomUUID();
  res.setHeader('x-request-id', requestId);
  return requestId;
}

/** How a request ended: its status (499 if abandoned) and its operation, or a route label if no procedure took it. */
function outcomeOf(req: Request, res: Response) {
  const abandoned = !res.writableFinished;
  const status = abandoned ? CLIENT_CLOSED : res.statusCode;
  const path = pathOf(req);
  const access = res.locals.access as AccessRecord;
  return { abandoned, status, path, access, operation: access.operation ?? routeLabel(path, status) };
}

const secondsSince = (arrival: Arrival) => Number(process.hrtime.bigint() - arrival.at) / 1e9;

/** The access line's fields after the request id pino-http binds (D-22): never the key, never a value sent. */
function accessLine(req: Request, res: Response) {
  const { abandoned, status, path, access, operation } = outcomeOf(req, res);
  const arrival = res.locals.arrival as Arrival;
  return {
    traceId: access.traceId,
    operation,
    method: req.method,
    path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path,
    status,
    durationMs: Math.round(secondsSince(arrival) * 1e6) / 1e3,
    // What this response put on the wire, headers included (the connection may carry more).
    bytes: req.socket.bytesWritten - arrival.bytesWritten,
    client: access.client,
    partnerId: access.partnerId,
    keyPrefix: access.keyPrefix,
    // D-12: a refused or failed request's code and its reason, never a value.
    code: access.code,
    cause: abandoned ? 'client closed the connection' : access.cause,
    abandoned: abandoned || undefined,
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

/** D-12, D-22: a refusal's code and reason go on the access line, an internal error also on an error line. */
export function logFailure(req: Request, error: unknown) {
  const locals = req.res?.locals;
  const access = locals?.access as AccessRecord | undefined;
  if (access?.code !== undefined) return;
  const code = partnerCodeOf(error);
  if (access) {
    access.code = code;
    access.cause = causeOf(error);
  }
  if (code === 'PARTNER_API_INTERNAL_ERROR' && !locals?.abandoned) {
    const { traceId, operation } = access ?? {};
    req.log.error({ traceId, operation, code, error }, 'request failed');
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
