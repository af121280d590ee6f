import type { AddressInfo } from 'node:net';
import type { Db } from '../../db/client';
import { createCaller } from '../../routers';
import { parseConfig } from '../../server/config';
import { createApp } from '../../server/http/app';
import { createHttpServer, type SocketBounds } from '../../server/http/server';
import { createLogger, silentLogger } from '../../server/logger';
import { createRequestContext } from '../../server/trpc/context';
import type { RateLimiter } from '../../server/trpc/ratelimit/sliding-window';
import { createServices, type Services } from '../../server/trpc/services';
import { afterFile } from './after-file';
import { NOW } from './database';

/**
 * The per-key budget of test services unless a test sets its own: more calls than any test makes, so a
 * test that loops over data never meets the limit of another rule's test. A test about the limit sets
 * `RATE_LIMIT_PER_MINUTE` itself (the production default is 100, D-14).
 */
export const TEST_RATE_LIMIT_PER_MINUTE = '1000000';

/** The configuration's own per-key budget, for a test about the limit partners get (100 a minute, D-14). */
export const PRODUCTION_RATE_LIMIT = { RATE_LIMIT_PER_MINUTE: String(parseConfig({}).RATE_LIMIT_PER_MINUTE) };

/** Services as main.ts builds them, on a test database, with the run's fixed clock and no log output. */
export function testServices(
  db: Db,
  env: Record<string, string> = {},
  sharedStore?: RateLimiter,
  cache: Parameters<typeof createServices>[5] = {},
): Services {
  return createServices(
    parseConfig({ RATE_LIMIT_PER_MINUTE: TEST_RATE_LIMIT_PER_MINUTE, ...env }),
    db,
    process.env.TEST_LOG ? createLogger('debug', (line) => process.stderr.write(line)) : silentLogger,
    () => NOW,
    sharedStore,
    cache,
  );
}

/** A procedure-level caller (no HTTP) presenting `apiKey`, through the same middleware as HTTP. */
export function callerFor(services: Services, apiKey: string | undefined, clientAddress = '10.0.0.1') {
  return createCaller(createRequestContext(services, { apiKey, clientAddress }));
}

/** The express app on an ephemeral port of 127.0.0.1, closed after the file. */
export async function startServer(
  services: Services,
  options: Parameters<typeof createApp>[1] = {},
  bounds: Partial<SocketBounds> = {},
) {
  const server = createHttpServer(createApp(services, options), services.log, bounds).listen(0, '127.0.0.1');
  afterFile(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    server,
    /** GET (or another method) with an optional key; the parsed JSON body and the response. */
    async request(path: string, options: { key?: string; method?: string; headers?: Record<string, string> } = {}) {
      const response = await fetch(`${base}${path}`, {
        method: options.method ?? 'GET',
        headers: { ...(options.key === undefined ? {} : { 'x-partner-api-key': options.key }), ...options.headers },
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      return {
        status: response.status,
        headers: response.headers,
        body: body as Record<string, unknown> & { data?: never },
      };
    },
  };
}
