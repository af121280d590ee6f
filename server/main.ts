import type { AddressInfo } from 'node:net';
import { buildDailyAggregate } from '../db/aggregate';
import { openDatabase } from '../db/client';
import { DEMO_KEYS, seedDemo } from '../db/seed/demo';
import { scheduleDailyAggregate } from './aggregate-schedule';
import { createApp } from './app';
import { ConfigError, parseConfig } from './config';
import { createHttpServer } from './http-server';
import { createLogger } from './logger';
import { policies } from './ratelimit/limiter';
import { connectSharedStore } from './ratelimit/redis';
import { createServices } from './services';

// Start: parse config, open the database (PGlite by default, postgres.js with DATABASE_URL), listen,
// drain on SIGTERM (D-1, D-2, D-17).

async function main() {
  const config = parseConfig(process.env);
  const log = createLogger(config.LOG_LEVEL);
  const started = Date.now();

  const database = await openDatabase(config.DATABASE_URL ? { url: config.DATABASE_URL } : {});
  if (database.driver === 'pglite') {
    // D-1: the embedded default is self-contained: schema, demo data and aggregate in process.
    await database.migrate();
    const now = new Date();
    const summary = await seedDemo(database.db, { now });
    const aggregate = await buildDailyAggregate(database.db, { now });
    log.info('demo data loaded', { ...summary, aggregate, ms: Date.now() - started });
  }

  // D-14: with REDIS_URL or Upstash the per-key limit is shared by every instance.
  const store = await connectSharedStore(config, policies(config.RATE_LIMIT_PER_MINUTE).perKey, log);
  const services = createServices(config, database.db, log, undefined, store?.limiter);
  // D-6: every instance runs the daily aggregate at start and after KST midnight; one of them builds.
  const aggregateSchedule = scheduleDailyAggregate({ db: database.db, log, now: services.now });
  const server = createHttpServer(createApp(services, { trustProxy: config.TRUST_PROXY }), log).listen(
    config.PORT,
    config.HOST,
  );
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  const base = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  log.info('listening', {
    base,
    driver: database.driver,
    rateLimitStore: store ? 'shared' : 'in-process',
    startupMs: Date.now() - started,
  });

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

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('draining', { signal });
    // Stop accepting, let in-flight requests finish, then close the database (D-17).
    // The schedule stops first, so no rebuild starts while draining.
    const scheduleStopped = aggregateSchedule.stop();
    server.close(async () => {
      await scheduleStopped;
      // Each closes on its own: a stalled store must not keep the database open.
      const closed = await Promise.allSettled([database.close(), store?.close()]);
      for (const result of closed)
        if (result.status === 'rejected') log.error('close failed', { error: result.reason });
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => {
      log.error('drain timed out; exiting');
      process.exit(1);
    }, 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
