import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openDatabase } from '../db/client';
import { defaultDemoCacheDir, openEmbeddedDemo } from '../db/embedded';
import { failureLines } from '../db/failure';
import { Replicas } from '../db/replicas';
import { DEMO_KEYS } from '../db/seed/demo';
import { scheduleDailyAggregate } from './aggregate-schedule';
import { createApp } from './app';
import { ConfigError, parseConfig } from './config';
import { connectionLimits, createHttpServer } from './http-server';
import { createLogger, flushLogs } from './logger';
import { enableMetrics, startMetricsServer } from './metrics';
import { policies } from './ratelimit/limiter';
import { createServices } from './services';
import { startTracing } from './tracing';

// Start: parse config, open the database (PGlite by default, postgres.js with DATABASE_URL), listen,
// drain on SIGTERM (D-1, D-2, D-17).

async function main() {
  const config = parseConfig(process.env);
  const log = createLogger(config.LOG_LEVEL);
  const started = Date.now();
  // D-22: OpenTelemetry is loaded only when its endpoint is set.
  const traced = config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? await startTracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT })
    : undefined;

  // D-20: the server's statements and connections are bounded; the CLIs' long migrations and loads are not.
  // D-1: the embedded default is self-contained: schema, demo data and aggregate in process, loaded from
  // the day's cached cluster when there is one (db/embedded.ts), else built here and cached after listening.
  const embedded = config.DATABASE_URL
    ? undefined
    : // Its files on disk, not in this process's memory (less RSS), removed at exit.
      await openEmbeddedDemo({ now: new Date(), cacheDir: defaultDemoCacheDir(), filesUnder: defaultDemoCacheDir() });
  // D-20, D-21: the server's connections carry PostgreSQL's statement and lock bounds and a pool of slots.
  const openServer = (url: string) =>
    openDatabase({
      url,
      maxConnections: config.DB_POOL_SIZE,
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      bounds: {
        statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
        lockTimeoutMs: config.DB_LOCK_TIMEOUT_MS,
        poolWaitMs: config.DB_POOL_WAIT_MS,
      },
    });
  const database = embedded?.database ?? (await openServer(config.DATABASE_URL ?? ''));
  // D-23: each replica has a pool of its own, with the same size and bounds as the primary's.
  const reads =
    config.DATABASE_REPLICA_URLS.length > 0
      ? new Replicas(database, await Promise.all(config.DATABASE_REPLICA_URLS.map(openServer)), {
          maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
          checkMs: config.DATABASE_REPLICA_CHECK_MS,
          onChange: (replica, usable, reason) =>
            usable ? log.info('replica usable', { replica }) : log.warn('replica skipped', { replica, reason }),
        })
      : undefined;
  // Started before listening: a replica serves only once a probe has found it a standby close enough.
  await reads?.start();
  if (embedded) {
    const { summary, aggregate, source, missReason, snapshot } = embedded;
    if (missReason) log.warn('demo cache not used', { reason: missReason });
    // Without the build's snapshot (npm run build:demo), a first start of the day pays initdb and migrations.
    if (snapshot && snapshot !== 'used') log.warn('demo snapshot not used', { reason: snapshot });
    log.info('demo data loaded', { source, ...summary, aggregate, ms: Date.now() - started });
  }

  // D-14: with REDIS_URL or Upstash the per-key limit is shared by every instance. Their clients are loaded
  // only then: node-redis alone is hundreds of modules, a good part of a start's module loading.
  const store =
    config.REDIS_URL || config.UPSTASH_REDIS_REST_URL
      ? await (await import('./ratelimit/redis')).connectSharedStore(
          config,
          policies(config.RATE_LIMIT_PER_MINUTE).perKey,
          log,
        )
      : undefined;
  const services = createServices(config, database.db, log, undefined, store?.limiter, undefined, reads);
  // D-6: every instance runs the daily aggregate at start and after KST midnight; one of them builds. It
  // writes, so it runs on the primary (D-23).
  const aggregateSchedule = scheduleDailyAggregate({ db: database.db, log, now: services.now });
  // The keys and brands are loaded before the first call, so a restart locks no one out (D-14).
  for (const directory of [services.rateLimit.keys, services.brands]) await directory.loadedSince(directory.now());
  // D-22: metrics on their own listener, only when METRICS_PORT is set.
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  if (config.METRICS_PORT !== undefined) {
    const registered = await enableMetrics();
    // The pool's figures come from the handle's slots, when it has them (postgres.js).
    registered.observeDatabase(database);
    registered.observeDirectories({ keys: services.rateLimit.keys, brands: services.brands });
    if (reads) registered.observeReplicas(reads);
    metricsServer = await startMetricsServer(registered.registry, {
      port: config.METRICS_PORT,
      host: config.METRICS_HOST ?? config.HOST,
      log,
    });
  }
  let stopping = false;
  const app = createApp(services, {
    trustProxy: config.TRUST_PROXY,
    deadlineMs: config.REQUEST_DEADLINE_MS,
    draining: () => stopping,
  });
  const server = createHttpServer(app, log, connectionLimits(config));
  server.listen(config.PORT, config.HOST);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  // Starting leaves garbage that nothing else would collect while the process idles (loading the
  // embedded cluster; V8 frees it only when allocation resumes). One full collection
  // now returns it; `npm start` passes --expose-gc for this, and without the flag there is nothing to call.
  collectGarbage();
  const { port } = server.address() as AddressInfo;
  const base = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  log.info('listening', {
    base,
    driver: database.driver,
    replicas: reads ? { configured: reads.replicas.length, usable: reads.usable() } : undefined,
    rateLimitStore: store ? 'shared' : 'in-process',
    metrics: metricsServer ? metricsServer.address() : undefined,
    tracing: traced ? 'otlp' : undefined,
    startupMs: Date.now() - started,
  });
  flushLogs();

  if (database.driver === 'pglite') {
    process.stdout.write(
      [
        '',
        `Partner Reporting API on ${base}/partner/v1  (embedded PGlite with demo data)`,
        `Docs: ${base}/docs  (OpenAPI: ${base}/partner/v1/openapi.json)`,
        'Demo keys (header x-partner-api-key):',
        ...Object.entries(DEMO_KEYS).map(([state, key]) => `  ${key.padEnd(26)} ${state}`),
        `Try: curl -H 'x-partner-api-key: ${DEMO_KEYS.active}' ${base}/partner/v1/brands`,
        '',
      ].join('\n'),
    );
  }

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const deadline = Date.now() + config.DRAIN_TIMEOUT_MS;
    const remaining = () => Math.max(0, deadline - Date.now());
    log.info('draining', { signal, drainMs: config.DRAIN_TIMEOUT_MS });
    // D-17/D-20/D-21: from here /readyz answers 503; stop accepting, answer what is in flight (Connection:
    // close), close idle connections; the schedule stops first, so no rebuild starts while draining. The
    // drain time bounds the whole shutdown: the stores get what the HTTP drain left, and the process
    // exits then whatever they are doing (a stalled store must not hold it).
    const scheduleStopped = aggregateSchedule.stop();
    // The stores keep a share of the budget: a request running to its deadline must not leave them none.
    const drained = await server.drain(
      Math.max(0, remaining() - Math.min(STORE_CLOSE_RESERVE_MS, config.DRAIN_TIMEOUT_MS / 5)),
    );
    await within(scheduleStopped, remaining());
    // The metrics stay scrapable through the drain; the last spans are exported with the rest, in what is left.
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    const [databaseClosed, limiterClosed] = await Promise.all([
      // The replicas' pools close beside the primary's, each within the same bound (db/client.ts).
      within(Promise.all([database.close(), reads?.close()]), remaining()),
      store ? within(store.close(), remaining()) : Promise.resolve('in-process' as const),
      traced ? within(traced.shutdown(), remaining()) : undefined,
    ]);
    for (const [name, outcome] of [
      ['database', databaseClosed],
      ['limiter', limiterClosed],
    ] as const)
      if (outcome instanceof Error) log.error('close failed', { store: name, error: outcome });
    const describe = (outcome: unknown) =>
      outcome instanceof Error
        ? 'failed'
        : outcome === TIMED_OUT
          ? 'timed out'
          : outcome === 'in-process'
            ? outcome
            : 'closed';
    log.info('stopped', {
      drained,
      database: describe(databaseClosed),
      limiter: describe(limiterClosed),
      ms: config.DRAIN_TIMEOUT_MS - remaining(),
    });
    process.exit(drained && describe(databaseClosed) === 'closed' ? 0 : 1);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  if (embedded?.source === 'built') {
    // Planner statistics and the cache entry for the next start of the day (db/embedded.ts): a failure
    // costs speed, never an answer. PGlite runs in this thread, so its statements hold up whatever request
    // arrives meanwhile: they wait for a quiet moment, after the first calls a newcomer makes.
    await quietFor(server, COMPLETE_WHEN_QUIET_MS);
    if (stopping) return;
    const completing = Date.now();
    embedded
      .complete()
      .then(
        () => log.info('demo data completed and cached', { dir: defaultDemoCacheDir(), ms: Date.now() - completing }),
        (error: unknown) => log.warn('demo data not completed or not cached', { error }),
      )
      // The dump leaves tens of MB of garbage too, just as the process starts to idle.
      .finally(collectGarbage);
  }
}

/** How long the embedded server waits without a request before it completes the demo cluster. */
const COMPLETE_WHEN_QUIET_MS = 2_000;

/** Resolves once `server` has received no request for `ms`. */
function quietFor(server: Server, ms: number): Promise<void> {
  let last = Date.now();
  const noteRequest = () => {
    last = Date.now();
  };
  server.on('request', noteRequest);
  return new Promise<void>((resolve) => {
    const check = () => {
      const left = last + ms - Date.now();
      if (left > 0) return void setTimeout(check, left).unref();
      server.off('request', noteRequest);
      resolve();
    };
    setTimeout(check, ms).unref();
  });
}

function collectGarbage() {
  (globalThis as { gc?: (options?: object) => void }).gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

const TIMED_OUT = Symbol('timed out');
/** Of the drain time, what closing the database and the limiter may use at most (the database closes within 2 s). */
const STORE_CLOSE_RESERVE_MS = 2_000;

/** What the work settled with (an Error if it failed), or TIMED_OUT if `ms` passed first. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | Error | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([
      work.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

main().catch((error: unknown) => {
  // One line with the cause (a database failure: what, where, which database); the stack on request.
  const verbose = process.argv.includes('--verbose') || process.env.LOG_LEVEL === 'debug';
  process.stderr.write(
    error instanceof ConfigError
      ? `${error.message}\n`
      : `failed to start: ${failureLines(error, process.env.DATABASE_URL, verbose)}`,
  );
  process.exit(1);
});
