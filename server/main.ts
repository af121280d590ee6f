import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { listenerOf, openDatabase } from '../db/client';
import { failureLines } from '../db/failure';
import { Replicas } from '../db/replicas';
import { scheduleDailyAggregate } from './aggregate-schedule';
import { ConfigError, parseConfig, STORE_CLOSE_RESERVE_MS, serverDatabaseOptions } from './config';
import { FeedStallWatch } from './feed-stall';
import { createApp } from './http/app';
import { createHttpServer } from './http/server';
import { createLogger, flushLogs, logUnhandledRejections } from './logger';
import { enableMetrics, startMetricsServer } from './trpc/metrics';
import { policies } from './trpc/ratelimit/sliding-window';
import { createServices } from './trpc/services';
import { startTracing } from './trpc/tracing';
import { DeliveryThread } from './webhooks/delivery-thread';
import { WebhookWorker } from './webhooks/worker';

// Start: config, database, services, app, listen; drain on SIGTERM (D-1, D-2, D-17, D-20).

const USAGE = `usage: npm start [-- --verbose]   (npm run dev: the same from the TypeScript source)

Serves the API on HOST:PORT (127.0.0.1:3000 by default): without DATABASE_URL an embedded PGlite with the
demo data, with it that PostgreSQL. Configured by environment variables only, each listed in
docs/operations.md § Configuration. SIGTERM or SIGINT drains and stops; --verbose prints the stack of a
failure to start.`;

async function main() {
  // Before anything opens a database or a port: asking for help must not start a server.
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = parseConfig(process.env);
  const log = createLogger(config.LOG_LEVEL);
  logUnhandledRejections(log);
  const started = Date.now();
  // D-22: OpenTelemetry is loaded only when its endpoint is set.
  const otlp = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  const traced = otlp ? await startTracing(otlp) : undefined;
  // D-1: without DATABASE_URL, the embedded demo (its module is loaded only then).
  const demo = config.DATABASE_URL ? undefined : await import('./demo');
  const openServer = (url: string) => openDatabase(serverDatabaseOptions(config, url));
  const database = (await demo?.openDemoDatabase(log)) ?? (await openServer(config.DATABASE_URL ?? ''));
  // D-23: each replica has a pool of its own, with the same size and bounds as the primary's.
  const reads =
    config.DATABASE_REPLICA_URLS.length > 0
      ? new Replicas(database, await Promise.all(config.DATABASE_REPLICA_URLS.map(openServer)), {
          maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
          checkMs: config.DATABASE_REPLICA_CHECK_MS,
          connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
          onChange: (replica, usable, reason) =>
            usable ? log.info({ replica }, 'replica usable') : log.warn({ replica, reason }, 'replica skipped'),
        })
      : undefined;
  // Started before listening: a replica serves only once a probe has found it a standby close enough.
  await reads?.start();
  // D-14: with REDIS_URL or Upstash the per-key limit is shared by every instance (clients loaded only then).
  const { perKey } = policies(config.RATE_LIMIT_PER_MINUTE);
  const store =
    config.REDIS_URL || config.UPSTASH_REDIS_REST_URL
      ? await (await import('./trpc/ratelimit/redis')).connectSharedStore(config, perKey, log)
      : undefined;
  const services = createServices(config, database.db, log, undefined, store?.limiter, undefined, reads);
  // The first statement: a database that cannot be reached ends the start here, in one line; and the feed's
  // cursor key (D-26) is read before any call.
  await services.feedCursorKey();
  // D-6: every instance schedules the daily aggregate, one of them builds; it writes, so on the primary (D-23).
  const aggregateSchedule = scheduleDailyAggregate({
    db: database.db,
    log,
    now: services.now,
    retentionDays: config.REVIEW_CHANGES_RETENTION_DAYS,
  });
  // D-26: what holds the change feed back, on the primary.
  const feedStall = new FeedStallWatch({ db: services.control, log, warnSeconds: config.FEED_STALL_WARN_SECONDS });
  feedStall.start();
  // D-28: webhook delivery, off without its key. On PostgreSQL in a thread of its own, with connections of its
  // own (never a slot a request needs, never a turn of the calls' event loop). The demo makes its own key and
  // delivers to its local receiver from this thread: its embedded database has one connection, this one's.
  const secretsKey = config.WEBHOOK_SECRETS_KEY ?? demo?.DEMO_WEBHOOK.secretsKey;
  const webhooks = !secretsKey
    ? undefined
    : database.driver === 'postgres'
      ? new DeliveryThread(log)
      : new WebhookWorker({
          db: services.control,
          listen: listenerOf(database.db),
          log,
          secretsKey,
          allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS || demo !== undefined,
          leaseMs: config.WEBHOOK_LEASE_MS,
          perSecond: config.WEBHOOK_DELIVERIES_PER_SECOND,
        });
  if (webhooks) void webhooks.start();
  else log.info('webhooks off: WEBHOOK_SECRETS_KEY is not set');
  // The key and brand cache listens for changes before the first call (D-14); what it does not hold yet, a
  // call reads by itself, so a restart locks no one out.
  await services.cache.start();
  // D-22: metrics on their own listener, only when METRICS_PORT is set.
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  if (config.METRICS_PORT !== undefined) {
    const registered = await enableMetrics();
    registered.observeDatabase(database);
    registered.observeCache(services.cache);
    registered.observeFeedStall(feedStall);
    if (webhooks) registered.observeWebhooks(webhooks);
    if (reads) registered.observeReplicas(reads);
    const host = config.METRICS_HOST ?? config.HOST;
    metricsServer = await startMetricsServer(registered.registry, { port: config.METRICS_PORT, host, log });
  }
  let stopping = false;
  const app = createApp(services, {
    trustProxy: config.TRUST_PROXY,
    deadlineMs: config.REQUEST_DEADLINE_MS,
    draining: () => stopping,
  });
  const server = createHttpServer(app, log, config);
  await once(server.listen(config.PORT, config.HOST), 'listening');
  const { port } = server.address() as AddressInfo;
  const base = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  log.info(
    {
      base,
      driver: database.driver,
      replicas: reads ? { configured: reads.replicas.length, usable: reads.usable() } : undefined,
      rateLimitStore: store?.status ?? 'in-process',
      rateLimitStoreAt: store?.at,
      metrics: metricsServer ? metricsServer.address() : undefined,
      tracing: traced ? 'otlp' : undefined,
      startupMs: Date.now() - started,
    },
    'listening',
  );
  flushLogs();
  demo?.printBanner(base);
  demo?.acceptDemoChanges(database, log, port);
  // D-20: stop accepting, answer what is in flight, close the stores within the drain time, exit.
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const deadline = Date.now() + config.DRAIN_TIMEOUT_MS;
    const remaining = () => Math.max(0, deadline - Date.now());
    log.info({ signal, drainMs: config.DRAIN_TIMEOUT_MS }, 'draining');
    // The schedule first, so no rebuild starts while draining.
    const scheduleStopped = Promise.all([aggregateSchedule.stop(), feedStall.stop(), webhooks?.stop()]);
    const drained = await server.drain(remaining() - STORE_CLOSE_RESERVE_MS);
    await within(scheduleStopped, remaining());
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    const closing = (name: string, work: Promise<unknown>) =>
      within(
        work.catch((error: unknown) => {
          log.error({ store: name, error }, 'close failed');
          throw error;
        }),
        remaining(),
      );
    const [databaseClosed, limiterClosed] = await Promise.all([
      closing(
        'database',
        services.cache.stop().then(() => Promise.all([database.close(), reads?.close()])),
      ),
      store ? closing('limiter', store.close()) : 'in-process',
      traced ? closing('tracing', traced.shutdown()) : undefined,
    ]);
    const ms = config.DRAIN_TIMEOUT_MS - remaining();
    log.info({ drained, database: databaseClosed, limiter: limiterClosed, ms }, 'stopped');
    process.exit(drained ? 0 : 1);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

function within(work: Promise<unknown>, ms: number): Promise<'closed' | 'failed' | 'timed out'> {
  const outcome = work.then(
    () => 'closed' as const,
    () => 'failed' as const,
  );
  return Promise.race([outcome, delay(ms, 'timed out' as const, { ref: false })]);
}

main().catch((error: unknown) => {
  const verbose = process.argv.includes('--verbose') || process.env.LOG_LEVEL === 'debug';
  process.stderr.write(
    error instanceof ConfigError
      ? `${error.message}\n`
      : `failed to start: ${failureLines(error, process.env.DATABASE_URL, verbose)}`,
  );
  process.exit(1);
});
