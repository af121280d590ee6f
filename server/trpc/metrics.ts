import { once } from 'node:events';
import http from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger';

/** Prometheus metrics (D-22), off until enableMetrics(); labels never hold a path, key, partner or address. */
export type Metrics = ReturnType<typeof createMetrics>;

type PoolStats = { size: number; inUse: number; waiting: number };

/** What is read when scraped, not counted as it happens. */
type Sources = {
  slots?: { stats(): PoolStats } | undefined;
  replicas?: { usable(): number };
  cache?: { ageMs(): number };
  feedStall?: { heldBackSeconds(): number };
  webhooks?: { largestLagSeconds(): number; disabledEndpoints(): number };
};

/** The metrics in effect, if any (a live binding: callers read it each time). */
export let metrics: Metrics | undefined;

/** Turns the metrics on (once per process; later calls return the same). */
export async function enableMetrics(): Promise<Metrics> {
  const prom = await import('prom-client');
  metrics ??= createMetrics(prom);
  return metrics;
}

function createMetrics({ Counter, collectDefaultMetrics, Gauge, Histogram, Registry }: typeof import('prom-client')) {
  const registry = new Registry();
  const registers = [registry];
  const sources: Sources = {};
  // Process CPU, memory, descriptors, GC, and the event-loop delay (nodejs_eventloop_lag_*).
  collectDefaultMetrics({ register: registry });
  // Only for a driver that reports its pool (PGlite has none: a 0 would say "idle" where it means "unknown").
  const poolGauge = (name: string, help: string, read: (stats: PoolStats) => number) => ({
    name,
    gauge: new Gauge({
      name,
      help,
      registers: [],
      collect() {
        const stats = sources.slots?.stats();
        if (stats) this.set(read(stats));
      },
    }),
  });
  const poolGauges = [
    poolGauge('partner_api_db_pool_size', 'Connections of the request pool (DB_POOL_SIZE)', (stats) => stats.size),
    poolGauge(
      'partner_api_db_pool_in_use',
      'Calls holding a slot (a connection) of the request pool',
      (stats) => stats.inUse,
    ),
    poolGauge('partner_api_db_pool_waiting', 'Calls waiting for a slot of the request pool', (stats) => stats.waiting),
  ];
  // Registered only when replicas are configured (observeReplicas).
  const replicaGauge = new Gauge({
    name: 'partner_api_db_replicas_in_rotation',
    help: 'Read replicas calls may read from now (0: every read is on the primary)',
    registers: [],
    collect() {
      if (sources.replicas) this.set(sources.replicas.usable());
    },
  });
  return {
    registry,
    requestDuration: new Histogram({
      name: 'partner_api_http_request_duration_seconds',
      help: 'HTTP requests by operation and status (499: the client closed first), and how long they took',
      labelNames: ['operation', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    rateLimitDecisions: new Counter({
      name: 'partner_api_rate_limit_decisions_total',
      help: 'Per-key limit decisions (one per key check: a single call or a whole tRPC batch)',
      labelNames: ['decision'] as const,
      registers,
    }),
    guardDecisions: new Counter({
      name: 'partner_api_refused_key_guard_decisions_total',
      help: 'Refused-key guard decisions per client address (calls whose key the cache does not hold as valid)',
      labelNames: ['decision'] as const,
      registers,
    }),
    storeFallbacks: new Counter({
      name: 'partner_api_rate_limit_store_fallbacks_total',
      help: 'Calls the shared rate-limit store did not judge: it failed or was slow (unavailable), or was left alone after that (cooldown)',
      labelNames: ['reason'] as const,
      registers,
    }),
    aggregateRuns: new Counter({
      name: 'partner_api_aggregate_runs_total',
      help: 'Daily aggregate runs by outcome: built, covered (already built), busy (another instance builds), failed',
      labelNames: ['outcome'] as const,
      registers,
    }),
    aggregateDuration: new Histogram({
      name: 'partner_api_aggregate_run_duration_seconds',
      help: 'How long daily aggregate runs took, by outcome',
      labelNames: ['outcome'] as const,
      buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800],
      registers,
    }),
    cacheAge: new Gauge({
      name: 'partner_api_cache_age_seconds',
      help: 'How far back every change of keys, partners and brands is confirmed to have reached the key and brand cache (over 1 s: calls read the database)',
      registers,
      collect() {
        if (sources.cache) this.set(sources.cache.ageMs() / 1000);
      },
    }),
    feedHeldBack: new Gauge({
      name: 'partner_api_feed_held_back_seconds',
      help: 'How long the oldest transaction still open on the primary has held the review change feed back (0: none open)',
      registers,
      collect() {
        this.set(sources.feedStall?.heldBackSeconds() ?? 0);
      },
    }),
    webhookDeliveries: new Counter({
      name: 'partner_api_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), rejected (another status), failed (no answer, or the target refused)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    webhookLag: new Gauge({
      name: 'partner_api_webhook_lag_seconds',
      help: 'Age of the oldest undelivered webhook event of any active endpoint (0: all delivered)',
      registers,
      collect() {
        this.set(sources.webhooks?.largestLagSeconds() ?? 0);
      },
    }),
    webhooksDisabled: new Gauge({
      name: 'partner_api_webhook_endpoints_disabled',
      help: 'Webhook endpoints disabled: by the operator, a receiver’s 410, or the retry schedule run out',
      registers,
      collect() {
        this.set(sources.webhooks?.disabledEndpoints() ?? 0);
      },
    }),
    /** The database whose pool is reported (postgres.js has slots). */
    observeDatabase(database: { slots?: { stats(): PoolStats } | undefined }) {
      sources.slots = database.slots;
      for (const { name, gauge } of poolGauges) {
        const registered = registry.getSingleMetric(name) !== undefined;
        if (sources.slots && !registered) registry.registerMetric(gauge);
        if (!sources.slots && registered) registry.removeSingleMetric(name);
      }
    },
    /** The read replicas whose state is reported (D-23). */
    observeReplicas(replicas: { usable(): number }) {
      sources.replicas = replicas;
      if (registry.getSingleMetric('partner_api_db_replicas_in_rotation') === undefined)
        registry.registerMetric(replicaGauge);
    },
    /** The key and brand cache, whose age is reported. */
    observeCache(cache: { ageMs(): number }) {
      sources.cache = cache;
    },
    /** What holds the review change feed back (D-26). */
    observeFeedStall(watch: { heldBackSeconds(): number }) {
      sources.feedStall = watch;
    },
    /** Webhook delivery (D-28). */
    observeWebhooks(worker: { largestLagSeconds(): number; disabledEndpoints(): number }) {
      sources.webhooks = worker;
    },
  };
}

/** The metrics listener, on its own port: GET /metrics in Prometheus's text format, 404 for anything else. */
export async function startMetricsServer(
  registry: Registry,
  options: { port: number; host: string; log: Logger },
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (error: unknown) => {
        options.log.error({ error }, 'metrics collection failed');
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics collection failed\n');
      },
    );
  });
  // A scraper's keep-alive connection must not hold the drain open.
  server.keepAliveTimeout = 5_000;
  await once(server.listen(options.port, options.host), 'listening');
  return server;
}
