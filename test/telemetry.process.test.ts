import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { DRIVER, openTestDatabase } from './support/database';
import { built, listeningLine, spawnLogged } from './support/server-process';

// D-22 as the real server process wires it (server/main.ts, as `npm start` runs it): METRICS_PORT opens
// a listener of its own, OTEL_EXPORTER_OTLP_ENDPOINT exports the request's spans down to its SQL, the
// access lines go to stdout, and SIGTERM still exits 0.

const spans: { name: string; traceId: string }[] = [];
let collector: http.Server;
let databaseUrl: string | undefined;

beforeAll(async () => {
  databaseUrl = (await openTestDatabase()).url;
  collector = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const parsed = JSON.parse(body) as {
        resourceSpans: { scopeSpans: { spans: { name: string; traceId: string }[] }[] }[];
      };
      for (const resource of parsed.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())));

describe(`the server process with metrics and tracing on (${DRIVER})`, () => {
  it('serves /metrics on its own port only, traces to the collector and logs the trace id', {
    timeout: 90_000,
  }, async () => {
    const root = path.resolve(import.meta.dirname, '..');
    const server = spawnLogged(process.execPath, [built('server/main.ts')], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      },
    });
    try {
      const listening = (await listeningLine(server)) as { base: string; metrics: { port: number } };
      const metricsBase = `http://127.0.0.1:${listening.metrics.port}`;
      expect(listening.metrics.port).not.toBe(Number(new URL(listening.base).port));

      const traceId = '5bf92f3577b34da6a3ce929d0e0e4736';
      const response = await fetch(`${listening.base}/partner/v1/brands/chicken-house/shops`, {
        headers: { 'x-partner-api-key': DEMO_KEYS.active, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      expect((await fetch(`${listening.base}/metrics`)).status).toBe(404);

      const metrics = await (await fetch(`${metricsBase}/metrics`)).text();
      expect(metrics).toMatch(
        /partner_api_http_request_duration_seconds_count\{operation="shops.list",status="200"\} 1/,
      );
      // Started before it listened: a finite age, however idle the instance (not "seconds since the last call").
      expect(metrics).toMatch(/^partner_api_cache_age_seconds [\d.]+(e-\d+)?$/m);
      expect(metrics).toMatch(/process_resident_memory_bytes/);
      // The request pool's figures where the driver has a pool (PostgreSQL), no made-up zeros on PGlite.
      if (DRIVER === 'postgres') {
        expect(metrics).toMatch(/^partner_api_db_pool_size \d+$/m);
        expect(metrics).toMatch(/^partner_api_db_pool_waiting \d+$/m);
      } else expect(metrics).not.toContain('partner_api_db_pool');

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      // Access lines are written in batches (server/logger.ts), all of them by the time the process exits.
      expect(server.lines.find((line) => line.msg === 'request' && line.operation === 'shops.list')).toMatchObject({
        traceId,
        status: 200,
        partnerId: expect.any(Number),
      });
      // The last spans are exported on the way out: the request and its procedure.
      const names = spans.filter((span) => span.traceId === traceId).map((span) => span.name);
      expect(names).toEqual(expect.arrayContaining(['GET shops.list', 'procedure shops.list']));
    } finally {
      server.child.kill('SIGKILL');
    }
  });
});
