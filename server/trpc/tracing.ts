import type * as Api from '@opentelemetry/api';

/** OpenTelemetry (D-22), loaded only when configured; spans by hand (ESM auto-instrumentation: docs/operations.md). */
export type Tracing = {
  /** A request's span, the child of the caller's trace if `parent` (W3C Trace Context, extracted) holds one. */
  startHttpSpan(method: string, parent: Api.Context): HttpSpan;
  /** Runs `work` (the rest of the request) with the span as the active one, so later spans are its children. */
  runInSpan(span: HttpSpan, work: () => void): void;
  endHttpSpan(span: HttpSpan, operation: string, status: number): void;
  /** A procedure call as a span around `work`; tRPC's middleware result `{ ok: false }` marks it failed. */
  procedure<T>(path: string, work: () => Promise<T>): Promise<T>;
  /** Exports what is pending and stops; the process's last spans are not lost on SIGTERM. */
  shutdown(): Promise<void>;
  /** Exports what is pending (tests). */
  flush(): Promise<void>;
};

export type HttpSpan = { span: Api.Span; context: Api.Context; traceId: string; method: string };

/** The tracing in effect, if any (a live binding: callers read it each time). */
export let tracing: Tracing | undefined;

const SERVICE_NAME = 'partner-reporting-api';

/** Starts exporting spans to `endpoint` (an OTLP/HTTP base URL; traces go to its `/v1/traces`). */
export async function startTracing(endpoint: string): Promise<Tracing> {
  const [api, { NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const url = `${endpoint.replace(/\/+$/, '')}/v1/traces`;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': SERVICE_NAME }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  // The AsyncLocalStorage context manager: a span entered with `context.with` parents later work, across awaits.
  provider.register();
  const tracer = provider.getTracer(SERVICE_NAME);
  const { SpanKind, SpanStatusCode } = api;
  const failed = (span: Api.Span) => span.setStatus({ code: SpanStatusCode.ERROR });
  const started: Tracing = {
    startHttpSpan(method, parent) {
      const attributes = { 'http.request.method': method };
      const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
      return { span, context: api.trace.setSpan(parent, span), traceId: span.spanContext().traceId, method };
    },
    runInSpan: (span, work) => api.context.with(span.context, work),
    endHttpSpan({ span, method }, operation, status) {
      span.updateName(`${method} ${operation}`);
      span.setAttribute('http.response.status_code', status);
      span.setAttribute('partner_api.operation', operation);
      if (status >= 500) failed(span);
      span.end();
    },
    procedure(path, work) {
      return tracer.startActiveSpan(`procedure ${path}`, { kind: SpanKind.INTERNAL }, async (span) => {
        try {
          const result = await work();
          if ((result as { ok?: unknown } | undefined)?.ok === false) failed(span);
          return result;
        } catch (error) {
          failed(span);
          throw error;
        } finally {
          span.end();
        }
      });
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      if (tracing === started) tracing = undefined;
      await provider.shutdown();
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
  tracing = started;
  return started;
}
