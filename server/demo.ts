import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'drizzle-orm';
import { buildDailyAggregate } from '../db/aggregate';
import {
  type DatabaseHandle,
  MIGRATIONS_FOLDER,
  openDatabase,
  PGLITE_INITDB_PARAMS,
  PGLITE_SETTINGS,
  pgliteOf,
} from '../db/client';
import { expireFeedCursors } from '../db/queries/review-changes';
import { DEMO_KEYS, DEMO_WEBHOOK, seedDemo } from '../db/seed/demo';
import { makeDemoChanges } from '../db/seed/demo-changes';
import type { Logger } from './logger';
import { endpointNamed, startFromNow } from './webhooks/admin';

// D-1: without DATABASE_URL, the demo data (D-3) in PGlite, from a migrated cluster the build saves in dist/.

// The demo's own V8 settings, made before PGlite's WebAssembly is compiled; production loads none of this.
// The baseline compiler alone runs the demo's few statements; the optimizing tier would recompile the
// whole cluster in the first seconds, with its memory. The load's garbage is collected once it is done.
setFlagsFromString('--no-wasm-tier-up');
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as (options: { type: 'major'; flavor: 'last-resort' }) => void;

/** dist/, where the build writes the snapshot; the TypeScript sources (tests, `npm run dev`) read it there too. */
const DIST = path.resolve(import.meta.dirname, import.meta.filename.endsWith('.ts') ? '../dist' : '..');

function snapshotFile(dir = DIST): string {
  const hash = createHash('sha256');
  const pglite = path.join(
    path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')),
    '../package.json',
  );
  hash.update(`${JSON.parse(readFileSync(pglite, 'utf8')).version} ${PGLITE_INITDB_PARAMS} ${PGLITE_SETTINGS}\0`);
  for (const name of readdirSync(MIGRATIONS_FOLDER, { recursive: true, encoding: 'utf8' }).sort()) {
    const file = path.join(MIGRATIONS_FOLDER, name);
    if (name.endsWith('.sql') || name.endsWith('.json')) hash.update(`${name}\0`).update(readFileSync(file));
  }
  return path.join(dir, `demo-cluster-${hash.digest('hex').slice(0, 16)}.tar`);
}

export async function writeSnapshot(dir = DIST): Promise<string> {
  const database = await openDatabase({});
  try {
    await database.migrate();
    await database.db.execute(sql`CHECKPOINT`);
    const dump = Buffer.from(await (await pgliteOf(database).dumpDataDir('none')).arrayBuffer());
    const file = snapshotFile(dir);
    await mkdir(dir, { recursive: true });
    await writeFile(`${file}.tmp`, dump);
    await rename(`${file}.tmp`, file);
    return file;
  } finally {
    await database.close();
  }
}

/** The demo database as `npm start` serves it; `snapshotDir` and `now` for tests. */
export async function openDemoDatabase(
  log: Logger,
  { snapshotDir = DIST, now = new Date() }: { snapshotDir?: string; now?: Date } = {},
): Promise<DatabaseHandle> {
  const started = Date.now();
  // The cluster's files on disk, not in the process's memory; gone when the process ends.
  const dataDir = await mkdtemp(path.join(tmpdir(), 'partner-api-demo-'));
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const { database, snapshot } = await openFromSnapshot(snapshotFile(snapshotDir), dataDir);
  if (!snapshot) log.warn('no demo snapshot for these migrations (npm run build makes it): starting from initdb');
  try {
    await database.migrate();
    // Keyword search's GIN indexes would cost the seed more than everything else; no answer depends on them.
    const gin = await database.rows<{ name: string }>(
      sql`SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public' AND indexdef LIKE '% USING gin %'`,
    );
    for (const { name } of gin) await database.db.execute(sql`DROP INDEX ${sql.identifier(name)}`);
    const summary = await seedDemo(database.db, { now });
    // Every start is the same snapshot, with the same transaction ids: a cursor of an earlier run is 410 (D-26).
    await expireFeedCursors(database.db);
    // The demo's webhook delivers what changes from this start on (D-28), not the seed's history.
    await startFromNow(database.db, await endpointNamed(database.db, DEMO_WEBHOOK.id));
    const aggregate = await buildDailyAggregate(database.db, { now });
    // PGlite runs no autovacuum: without fresh statistics the planner takes the tables for empty.
    await database.db.execute(sql`VACUUM ANALYZE`);
    log.info({ ...summary, aggregate, snapshot, ms: Date.now() - started }, 'demo data loaded');
    // A last-resort collection also gives the heap the load grew back to the system.
    collectGarbage({ type: 'major', flavor: 'last-resort' });
    return database;
  } catch (error) {
    await database.close().catch(() => undefined);
    throw error;
  }
}

/** The cluster from the build's snapshot if there is one, else from initdb; the snapshot's bytes are not kept. */
async function openFromSnapshot(file: string, dataDir: string) {
  const snapshot = await readFile(file).catch(() => undefined);
  const opened = await openDatabase(snapshot ? { loadDataDir: snapshot, dataDir } : { dataDir });
  const database = {
    ...opened,
    close: () => opened.close().finally(() => rm(dataDir, { recursive: true, force: true })),
  };
  return { database, snapshot: snapshot !== undefined };
}

/** Where the demo server on `port` takes `npm run demo:changes`: a Unix socket beside the OS's temporary files. */
export function demoChangesSocket(port: number): string {
  return path.join(tmpdir(), `partner-reporting-api-demo-${port}.sock`);
}

/**
 * `npm run demo:changes` cannot open the embedded database, which lives in this process: a connection to the
 * demo's socket makes the changes here and is answered with their review ids (D-26), or with the failure.
 */
export function acceptDemoChanges(database: DatabaseHandle, log: Logger, port: number): void {
  const file = demoChangesSocket(port);
  // A socket file left by a demo that died on this port would refuse the listen; the port is ours now.
  rmSync(file, { force: true });
  const server = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    makeDemoChanges(database.db).then(
      (changes) => {
        log.info({ changes }, 'demo changes made');
        socket.end(JSON.stringify({ changes }));
      },
      (error: unknown) => {
        log.error({ error }, 'demo changes failed');
        socket.end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
      },
    );
  });
  server.on('error', (error) => log.warn({ error, socket: file }, 'npm run demo:changes will not reach this demo'));
  server.listen(file).unref();
  process.once('exit', () => rmSync(file, { force: true }));
}

export function printBanner(base: string): void {
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

/** The demo's webhook (D-28): main.ts delivers to it with the demo's own secrets key. */
export { DEMO_WEBHOOK };
