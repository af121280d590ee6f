import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
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
} from '../db/client';
import { expireFeedCursors } from '../db/queries/review-changes';
import { DEMO_KEYS, DEMO_WEBHOOK, seedDemo } from '../db/seed/demo';
import { makeDemoChanges } from '../db/seed/demo-changes';
import type { Logger } from './logger';
import { endpointNamed, startFromNow } from './webhooks/admin';

// D-1: without DATABASE_URL, the demo data (D-3) in PGlite, from a migrated cluster the build saves in dist/.

// The demo's own V8 settings, made before PGlite's WebAssembly is compiled; production loads none of this.
// The baseline compiler alone runs the demo's few statements; the optimizing tier would recompile the
// cluster's hot functions during the load, holding hundreds of MB while it does. Both flags are needed:
// V8 13 tiers up by how often a function runs (dynamic tiering), not only by --wasm-tier-up. The load's
// garbage is collected once it is done.
setFlagsFromString('--no-wasm-tier-up');
setFlagsFromString('--no-wasm-dynamic-tiering');
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as (options: { type: 'major'; flavor: 'last-resort' }) => void;

/** dist/, where the build writes the snapshot; the TypeScript sources (tests, `npm run dev`) read it there too. */
const DIST = path.resolve(import.meta.dirname, import.meta.filename.endsWith('.ts') ? '../dist' : '..');

/** The build's migrated cluster: a folder named for PGlite's version and settings and the migrations. */
export function snapshotFolder(dir = DIST): string {
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
  return path.join(dir, `demo-cluster-${hash.digest('hex').slice(0, 16)}`);
}

export async function writeSnapshot(dir = DIST): Promise<string> {
  const folder = snapshotFolder(dir);
  // The name says what it holds: one already there is this one, written whole (renamed into place), and a
  // starting demo may be copying it.
  if (existsSync(folder)) return folder;
  const building = `${folder}.tmp`;
  await rm(building, { recursive: true, force: true });
  await mkdir(building, { recursive: true });
  const database = await openDatabase({ dataDir: building });
  try {
    await database.migrate();
  } finally {
    // A clean shutdown checkpoints: the folder is a cluster any start can copy.
    await database.close();
  }
  await rm(folder, { recursive: true, force: true });
  await rename(building, folder);
  return folder;
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
  const { database, snapshot } = await openFromSnapshot(snapshotFolder(snapshotDir), dataDir);
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
    // PGlite runs no autovacuum: without fresh statistics the planner takes the tables for empty. Statistics
    // are all it needs; a VACUUM of tables that were only just written would cost the start and gain nothing.
    await database.db.execute(sql`ANALYZE`);
    log.info({ ...summary, aggregate, snapshot, ms: Date.now() - started }, 'demo data loaded');
    // A last-resort collection also gives the heap the load grew back to the system.
    collectGarbage({ type: 'major', flavor: 'last-resort' });
    return database;
  } catch (error) {
    await database.close().catch(() => undefined);
    throw error;
  }
}

/** A copy of the build's cluster if there is one, else a cluster from initdb, in `dataDir`. */
async function openFromSnapshot(folder: string, dataDir: string) {
  // A copy of the files, which PGlite opens in place: no archive to unpack through its file system. Node's
  // synchronous copy runs in native code, several times faster than its promise one; nothing else runs yet.
  const snapshot = existsSync(folder);
  if (snapshot) cpSync(folder, dataDir, { recursive: true });
  const opened = await openDatabase({ dataDir });
  const database = {
    ...opened,
    close: () => opened.close().finally(() => rm(dataDir, { recursive: true, force: true })),
  };
  return { database, snapshot };
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
