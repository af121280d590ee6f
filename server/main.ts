import type { AddressInfo } from 'node:net';
import { openDatabase } from '../db/client';
import { DEMO_KEYS, seedDemo } from '../db/seed/demo';
import { createApp } from './app';
import { ConfigError, parseConfig } from './config';
import { createLogger } from './logger';
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
    const summary = await seedDemo(database.db);
    log.info('demo data loaded', { ...summary, ms: Date.now() - started });
  }

  const services = createServices(config, database.db, log);
  const server = createApp(services).listen(config.PORT, config.HOST);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  const base = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  log.info('listening', { base, driver: database.driver, startupMs: Date.now() - started });

  if (database.driver === 'pglite') {
    process.stdout.write(
      [
        '',
        `Partner Reporting API on ${base}/partner/v1  (embedded PGlite with demo data)`,
        `OpenAPI: ${base}/partner/v1/openapi.json`,
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
    server.close(async () => {
      await database.close();
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
