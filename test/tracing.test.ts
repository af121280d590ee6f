import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { createLogger } from '../server/logger';
import { startTracing, type Tracing } from '../server/trpc/tracing';
import { openTestDatabase } from './support/database';
import { DEMO_BRAND } from './support/endpoints';
import { startServer, testServices } from './support/services';

// D-22: with OTEL_EXPORTER_OTLP_ENDPOINT set, each request is exported as spans HTTP → procedure, the
// child of a valid incoming traceparent. A collector in this process receives them over OTLP/HTTP.

type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: number | string } }[];
};
type OtlpExport = { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };

const received: OtlpSpan[] = [];
let collector: http.Server;
let tracing: Tracing;
let server: Awaited<ReturnType<typeof startServer>>;
const lines: string[] = [];

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const resource of body.resourceSpans)
          for (const scope of resource.scopeSpans) received.push(...scope.spans);
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  tracing = await startTracing(`http://127.0.0.1:${(collector.address() as AddressInfo).port}/`);
  const database = await openTestDatabase();
  const services = testServices(database.db);
  services.log = createLogger('info', (line) => lines.push(line));
  server = await startServer(services);
});

afterAll(async () => {
  await tracing.shutdown();
  await new Promise<void>((resolve) => collector.close(() => resolve()));
});

const attribute = (span: OtlpSpan, key: string) => span.attributes.find((entry) => entry.key === key)?.value;

describe('OpenTelemetry spans (D-22)', () => {
  it('exports HTTP → procedure spans under the incoming traceparent, with nothing the caller sent', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parentId = 'b7ad6b7169203331';
    const keyword = 'crispywings';
    const response = await server.request(`/partner/v1/brands/${DEMO_BRAND}/reviews?keyword=${keyword}`, {
      key: DEMO_KEYS.active,
      headers: { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=callerstate4711' },
    });
    expect(response.status).toBeLessThan(500);
    await tracing.flush();
    const trace = received.filter((span) => span.traceId === traceId);

    const httpSpan = trace.find((span) => span.parentSpanId === parentId);
    expect(httpSpan).toMatchObject({ name: expect.stringMatching(/^GET reviews\.list$/), kind: 2 });
    expect(Number(attribute(httpSpan as OtlpSpan, 'http.response.status_code')?.intValue)).toBe(response.status);

    const procedure = trace.find((span) => span.parentSpanId === httpSpan?.spanId);
    expect(procedure).toMatchObject({ name: 'procedure reviews.list' });

    // The keyword and the tracestate the call sent are in no span; the caches' shared reloads are no span of it.
    expect(JSON.stringify(trace)).not.toContain(keyword);
    expect(JSON.stringify(trace)).not.toContain('callerstate4711');
    expect(trace).toHaveLength(2);

    // The access line carries the same trace id, so a log line leads to its trace.
    const access = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'request');
    expect(access).toMatchObject({ traceId, operation: 'reviews.list' });
  });

  it('starts a new trace for a request without a valid traceparent, and logs its id', async () => {
    const before = lines.length;
    await server.request('/partner/v1/brands', { key: DEMO_KEYS.active, headers: { traceparent: 'garbage' } });
    await tracing.flush();
    const access = lines
      .slice(before)
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === 'request');
    const root = received.find((span) => span.traceId === access?.traceId && !span.parentSpanId);
    expect(root).toMatchObject({ name: 'GET brands.list', kind: 2 });
    expect(received.some((span) => span.parentSpanId === root?.spanId && span.name === 'procedure brands.list')).toBe(
      true,
    );
  });
});
