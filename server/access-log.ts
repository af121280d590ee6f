import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { clientAddressOf, pathOf } from './http-context';
import type { Logger } from './logger';
import { metrics } from './metrics';
import { newTraceId, parseTraceparent } from './traceparent';
import { tracing } from './tracing';

/**
 * What the access line of one request says beyond what the response shows (D-22), filled in while it
 * runs: the operation once a procedure runs, the partner and key display prefix once the key is looked
 * up, the partner error code and its reason once it is refused or fails. Never the key itself.
 */
export type AccessRecord = {
  requestId: string;
  traceId: string;
  /** The client's address (clientAddressOf), worked out once a request. */
  client: string | undefined;
  /** The procedure (`reviews.list`), `trpc.batch`, or a route label (routeLabel): bounded cardinality. */
  operation: string | undefined;
  partnerId: number | undefined;
  keyPrefix: string | undefined;
  code: string | undefined;
  cause: unknown;
};

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MAX_PATH = 200;

/**
 * D-12 request id (the caller's if well-formed) on every response; D-22 one access line a request, the
 * request's trace (a valid W3C `traceparent`'s, else a new one), its HTTP span when tracing is on, and
 * its place in the request metrics. The line is written when the response closes: a finished response
 * with its status, or one the client abandoned (`abandoned: true`, status 499, at info: it is the
 * client's choice, not a fault).
 */
export function requestIdAndAccessLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const offered = req.get('x-request-id');
    const requestId = offered && REQUEST_ID.test(offered) ? offered : randomUUID();
    res.setHeader('x-request-id', requestId);
    const parent = parseTraceparent(req.headers.traceparent as string | undefined);
    const traced = tracing();
    const span = traced?.startHttpSpan(req.method, parent);
    const access: AccessRecord = {
      requestId,
      traceId: span?.traceId ?? parent?.traceId ?? newTraceId(),
      client: clientAddressOf(req),
      operation: undefined,
      partnerId: undefined,
      keyPrefix: undefined,
      code: undefined,
      cause: undefined,
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
      metrics()?.requestDuration.observe({ operation, status }, seconds);
      if (span) tracing()?.endHttpSpan(span, operation, status);
      log.info('request', {
        requestId,
        traceId: access.traceId,
        operation,
        method: req.method,
        path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path,
        status,
        durationMs: Math.round(seconds * 1e6) / 1e3,
        // What this response put on the wire, headers included (the socket's count; the connection may carry more).
        bytes: req.socket.bytesWritten - bytesBefore,
        client: access.client,
        partnerId: access.partnerId,
        keyPrefix: access.keyPrefix,
        // D-12: a refused or failed request's code and its reason (the parameter and its rule), never a value.
        code: access.code,
        cause: abandoned ? 'client closed the connection' : access.cause,
        abandoned: abandoned || undefined,
      });
    });
    if (span && traced) traced.runInSpan(span, next);
    else next();
  };
}

/** The status logged and counted for a request the client abandoned before its answer (nginx's 499). */
export const CLIENT_CLOSED = 499;

/**
 * The operation of a request no procedure took: one of a few fixed labels, never the path itself, so a
 * scanner's random paths add no series to the metrics.
 */
export function routeLabel(path: string, status: number): string {
  if (path === '/healthz') return 'healthz';
  if (path === '/readyz') return 'readyz';
  if (path === '/partner/v1/openapi.json') return 'openapi';
  if (path === '/docs' || path.startsWith('/docs/')) return 'docs';
  if (path.startsWith('/partner/v1/trpc/') && status !== 404) return 'trpc';
  return status === 404 ? 'not_found' : 'other';
}
