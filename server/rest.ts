import { callTRPCProcedure, TRPCError } from '@trpc/server';
import type { NextFunction, Request, Response } from 'express';
import { coerceSchema, instanceofZodTypeObject, unwrapZodType } from 'trpc-to-openapi';
import { z } from 'zod';
import type { AppRouter } from '../routers';
import type { RequestContext } from './context';
import { errorEnvelope, httpStatusOf, partnerCodeOf } from './errors';
import type { HttpContextFactory } from './http-context';
import { restRoutes } from './routes';

type Call = (ctx: RequestContext, input: unknown) => Promise<unknown>;
type Procedure = { _def: { inputs: unknown[] } };

/** A REST operation with what a call needs, worked out once: its procedure, parameters and the array ones. */
type Operation = { pattern: RegExp; call: Call; arrays: string[]; hasInput: boolean };

/**
 * The REST facade at the /partner/v1 GET paths: the router's procedures as trpc-to-openapi describes them
 * (`meta.openapi`, the OpenAPI document is its generator's), served from a route table built once. Each
 * request is what trpc-to-openapi's node handler makes of it, without the work it repeats per call (a
 * fetch Request for a signal the context does not use, URL parsing, the schema walk for coercion):
 * - the query as express parsed it ('simple' parser): an empty value is absent, a single value is a string,
 *   repeated ones an array (wrapped for an array parameter); path parameters override query ones;
 * - the input schema's numbers and booleans coerced from text (trpc-to-openapi's coerceSchema, applied
 *   once here at start);
 * - the answer as JSON with the context's response headers; any failure as its partner status and the
 *   partner envelope the error formatter gives it (D-12). Unknown paths and methods fall through to
 *   `next()` and the app's 404 catch-all.
 */
export function restFacade(appRouter: AppRouter, createContext: HttpContextFactory) {
  const procedures = appRouter._def.procedures as unknown as Record<string, Procedure>;
  const operations: Operation[] = restRoutes(appRouter).map((route) => {
    const procedure = procedures[route.procedure];
    if (!procedure) throw new Error(`no procedure ${route.procedure}`);
    const [input] = procedure._def.inputs;
    const schema = input === undefined ? undefined : unwrapZodType(input as z.ZodType, true);
    const arrays: string[] = [];
    if (schema && instanceofZodTypeObject(schema)) {
      coerceSchema(schema);
      for (const [name, shape] of Object.entries(schema.shape)) {
        const inner = shape instanceof z.ZodOptional ? shape.unwrap() : shape;
        if (inner instanceof z.ZodArray) arrays.push(name);
      }
    }
    // What a createCaller call does, without the proxies it builds for each call to find the procedure.
    const call: Call = (ctx, value) =>
      callTRPCProcedure({
        router: appRouter,
        path: route.procedure,
        type: 'query',
        ctx,
        getRawInput: async () => value,
        signal: undefined,
        batchIndex: 0,
      });
    return { pattern: route.pattern, call, arrays, hasInput: input !== undefined };
  });

  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET') return next();
    const path = decodedPath(req.path);
    let operation: Operation | undefined;
    let match: RegExpExecArray | null = null;
    for (const candidate of operations) {
      match = candidate.pattern.exec(path);
      if (match) {
        operation = candidate;
        break;
      }
    }
    if (!operation || !match) return next();
    let ctx: ReturnType<HttpContextFactory> | undefined;
    try {
      const input = operation.hasInput ? { ...queryOf(req, operation.arrays), ...match.groups } : undefined;
      ctx = createContext(req, res);
      const data = await operation.call(ctx, input);
      send(res, 200, ctx.responseHeaders, JSON.stringify(data));
    } catch (cause) {
      const error =
        cause instanceof TRPCError
          ? cause
          : new TRPCError({
              code: 'INTERNAL_SERVER_ERROR',
              message: 'Internal server error',
              cause: cause instanceof Error ? cause : undefined,
            });
      createContext.logFailure(req, error);
      send(res, httpStatusOf(error), ctx?.responseHeaders ?? {}, JSON.stringify(errorEnvelope(partnerCodeOf(error))));
    }
  };
}

function send(res: Response, status: number, headers: Record<string, string>, body: string) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) res.setHeader(name, value);
  }
  res.end(body);
}

/** The query parameters as trpc-to-openapi reads them from express's parse. */
function queryOf(req: Request, arrays: string[]): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  const parsed = req.query as Record<string, string | string[] | undefined>;
  for (const name in parsed) {
    const value = parsed[name];
    if (!value) continue;
    query[name] = Array.isArray(value) && value.length === 1 ? value[0] : value;
  }
  for (const name of arrays) {
    const value = query[name];
    if (value !== undefined && !Array.isArray(value)) query[name] = [value];
  }
  return query;
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
