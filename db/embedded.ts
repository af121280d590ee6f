// The embedded default of D-1: PGlite in process with the demo data of D-3 and the daily aggregate, started
// from a data directory cached on disk when one was built for the same day and the same code.
//
// Building the demo cluster (initdb, migrations, seed, aggregate) costs seconds and, through PGlite's
// initdb (a second PGlite instance), hundreds of MB that the process keeps; loading the same cluster from
// a tarball skips all of it. The cache is keyed so that it never serves data another build would not give:
// - the KST day of `now` (the demo data is relative to today in KST, D-3), and
// - a hash of every file under db/ (migrations, schema, seed, aggregate, the PGlite settings of
//   client.ts) and of PGlite's version.
// A tarball is only used when its sidecar names it and its SHA-256 matches; anything else (missing, torn,
// another key) is a miss, and a miss builds as without a cache. Writing is atomic (temporary file, then
// rename), so concurrent starts at worst both build. Entries of other keys are removed when one is written.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getTableName, sql } from 'drizzle-orm';
import { type AggregateResult, buildDailyAggregate } from './aggregate';
import { type DatabaseHandle, openDatabase, pgliteOf } from './client';
import { pgliteVersion, readSnapshot } from './demo-snapshot';
import { kstToday } from './kst';
import { reviews, salesSnapshots } from './schema';
import { type DemoSummary, seedDemo } from './seed/demo';

const DB_DIR = import.meta.dirname;
const CACHE_PREFIX = 'demo-';

/** Where `npm start` keeps the cached demo cluster: the OS temporary directory, per user. */
export function defaultDemoCacheDir(): string {
  return path.join(os.tmpdir(), `partner-reporting-api-${os.userInfo().uid}`);
}

/** What a demo cluster was built with, kept beside its tarball. */
type CacheMeta = { key: string; sha256: string; summary: DemoSummary; aggregate: AggregateResult };

export type EmbeddedDemo = {
  database: DatabaseHandle;
  summary: DemoSummary;
  aggregate: AggregateResult;
  /** `hit`: loaded from the cache; `built`: migrated, seeded and aggregated now. */
  source: 'hit' | 'built';
  /** Why the cache was not used, when it was not (no entry is not a reason worth logging: undefined). */
  missReason?: string;
  /**
   * When built: whether it started from the migrated cluster of the build (db/demo-snapshot.ts), or why
   * not (then initdb and the migrations ran here).
   */
  snapshot?: 'used' | string;
  /**
   * What a build leaves for after listening, none of which changes an answer: the keyword search indexes,
   * the planner statistics of their expressions, then the cache entry when there is a cache directory.
   * No-op after a hit.
   */
  complete(): Promise<void>;
};

/** Every file under `dir`, sorted, as [relative path, contents]. */
function filesUnder(dir: string, base = dir): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full, base));
    else if (entry.isFile()) out.push([path.relative(base, full), readFileSync(full)]);
  }
  return out;
}

/**
 * The cache key of the demo cluster for `now`: the KST day and a hash of the code that builds it. `dbDir`
 * is db/ (tests point it at a copy).
 */
export function demoCacheKey(now: Date, dbDir: string = DB_DIR): string {
  const hash = createHash('sha256');
  hash.update(`pglite ${pgliteVersion()}\0`);
  for (const [name, contents] of filesUnder(dbDir)) {
    hash.update(`${name}\0${contents.length}\0`);
    hash.update(contents);
  }
  return `${kstToday(now)}-${hash.digest('hex').slice(0, 16)}`;
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const files = (dir: string, key: string) => ({
  tarball: path.join(dir, `${CACHE_PREFIX}${key}.tar`),
  meta: path.join(dir, `${CACHE_PREFIX}${key}.json`),
});

/** The cached cluster of `key`, verified, or why there is none. */
export async function readDemoCache(
  dir: string,
  key: string,
): Promise<{ meta: CacheMeta; tarball: Uint8Array } | { miss: string }> {
  const { tarball, meta } = files(dir, key);
  let parsed: CacheMeta;
  let bytes: Buffer;
  try {
    parsed = JSON.parse(await readFile(meta, 'utf8')) as CacheMeta;
    bytes = await readFile(tarball);
  } catch (error) {
    return { miss: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'none' : String(error) };
  }
  if (parsed.key !== key || parsed.sha256 !== sha256(bytes)) return { miss: 'does not match its key or checksum' };
  return { meta: parsed, tarball: bytes };
}

/** Writes `dump` (an uncompressed data-directory tarball) as the cache entry of `key`, atomically. */
export async function writeDemoCache(dir: string, meta: Omit<CacheMeta, 'sha256'>, dump: Uint8Array): Promise<void> {
  // Uncompressed: larger on disk, but gunzip took longer under load than reading the bytes.
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const target = files(dir, meta.key);
  const suffix = `.${process.pid}.${Date.now()}.tmp`;
  // The tarball first, then its sidecar: a reader only trusts a tarball its sidecar vouches for.
  await writeFile(target.tarball + suffix, dump);
  await rename(target.tarball + suffix, target.tarball);
  await writeFile(target.meta + suffix, JSON.stringify({ ...meta, sha256: sha256(dump) }));
  await rename(target.meta + suffix, target.meta);
  // Entries of other days or other code are never read again.
  for (const name of await readdir(dir))
    if (name.startsWith(CACHE_PREFIX) && !name.startsWith(`${CACHE_PREFIX}${meta.key}.`))
      await rm(path.join(dir, name), { force: true });
}

/** Names the data directories of running servers: the owner's pid, so a crashed one's can be told. */
const DATA_DIR_PREFIX = 'data-';

/**
 * A fresh, empty directory for this process's cluster files under `parent`, and its removal. Directories
 * left by processes that no longer run (killed, crashed) are removed first; those of running ones stay.
 */
export async function embeddedDataDir(parent: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  await mkdir(parent, { recursive: true, mode: 0o700 });
  for (const name of await readdir(parent)) {
    const owner = Number(name.slice(DATA_DIR_PREFIX.length).split('-')[0]);
    if (name.startsWith(DATA_DIR_PREFIX) && Number.isInteger(owner) && owner !== process.pid && !isRunning(owner))
      await rm(path.join(parent, name), { recursive: true, force: true });
  }
  const dir = await mkdtemp(path.join(parent, `${DATA_DIR_PREFIX}${process.pid}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * ANALYZE of every column of every table, which leaves out the index expressions (PostgreSQL analyzes
 * those only without a column list).
 */
const ANALYZE_COLUMNS = sql.raw(`DO $$
DECLARE t record;
BEGIN
  FOR t IN
    SELECT c.oid::regclass AS rel, string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) AS cols
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = 'public' AND c.relkind = 'r'
    GROUP BY c.oid
  LOOP
    EXECUTE format('ANALYZE %s (%s)', t.rel, t.cols);
  END LOOP;
END $$`);

/** The tables the demo seed fills by the thousand. */
const BULK_TABLES = [reviews, salesSnapshots];

/**
 * What a bulk load is cheaper without, dropped before the seed and made again from their own definitions,
 * as a restore does. The foreign keys of the tables the seed fills by the thousand: checked row by row, one
 * lookup per key and row, they were about a third of inserting the reviews; added back after the seed,
 * each is checked once over the whole table, so the seed is held to them as before. (Adding one back costs
 * more than the checks of a small table's few rows, so the other tables keep theirs.) The GIN indexes of
 * keyword search: kept up to date row by row they cost more than the rest of the seed, and one sorted build
 * costs about as much as the seed again, mostly evaluating `partner_brand_grams` on every review. No answer
 * depends on an index, so they are built in `complete()`, once the server is quiet, not before the first
 * answer; until then a keyword search reads the brand's rows (a few thousand) with the same rule.
 */
async function dropForBulkLoad(
  database: DatabaseHandle,
): Promise<{ foreignKeys: () => Promise<void>; searchIndexes: () => Promise<void> }> {
  const gin = await database.rows<{ name: string; definition: string }>(sql`
    SELECT indexname AS name, indexdef AS definition FROM pg_indexes
    WHERE schemaname = 'public' AND indexdef LIKE '% USING gin %' ORDER BY indexname`);
  const foreignKeys = await database.rows<{ relation: string; name: string; definition: string }>(sql`
    SELECT conrelid::regclass::text AS relation, conname AS name, pg_get_constraintdef(oid) AS definition
    FROM pg_constraint WHERE contype = 'f' AND conrelid IN (${sql.join(
      BULK_TABLES.map((table) => sql`${getTableName(table)}::regclass`),
      sql`, `,
    )}) ORDER BY 1, 2`);
  for (const { name } of gin) await database.db.execute(sql`DROP INDEX ${sql.identifier(name)}`);
  for (const { relation, name } of foreignKeys)
    await database.db.execute(sql`ALTER TABLE ${sql.raw(relation)} DROP CONSTRAINT ${sql.identifier(name)}`);
  return {
    foreignKeys: async () => {
      for (const { relation, name, definition } of foreignKeys)
        await database.db.execute(
          sql`ALTER TABLE ${sql.raw(relation)} ADD CONSTRAINT ${sql.identifier(name)} ${sql.raw(definition)}`,
        );
    },
    searchIndexes: async () => {
      for (const { definition } of gin) await database.db.execute(sql.raw(definition));
    },
  };
}

/**
 * The demo cluster for `now`: from the cache in `cacheDir` when it holds one for this key, else built
 * (migrate, seed, aggregate). `cacheDir: null` never reads or writes a cache.
 */
export async function openEmbeddedDemo(options: {
  now: Date;
  cacheDir: string | null;
  /**
   * A cluster loaded from the cache keeps its files on disk, in a directory of its own under this one
   * (embeddedDataDir), removed when it is closed. One built here (from the snapshot or from initdb) keeps
   * them in memory: the build creates and rewrites hundreds of files, and on a disk busy with other writes
   * each file created waits on the journal; in memory it costs the cluster's size in RSS, for that process
   * only (BENCHMARKS.md § Embedded default: first start).
   */
  filesUnder?: string;
  /** Where the build's migrated cluster is (db/demo-snapshot.ts); `null`: start from initdb. */
  snapshotDir?: string | null;
}): Promise<EmbeddedDemo> {
  const { now, cacheDir, filesUnder } = options;
  const key = cacheDir ? demoCacheKey(now) : undefined;
  let missReason: string | undefined;
  if (cacheDir && key) {
    const cached = await readDemoCache(cacheDir, key);
    if ('meta' in cached) {
      const onDisk = filesUnder ? await embeddedDataDir(filesUnder) : undefined;
      const loaded = await openDatabase({ loadDataDir: cached.tarball, ...(onDisk && { dataDir: onDisk.dir }) });
      const database = onDisk ? { ...loaded, close: () => loaded.close().finally(onDisk.remove) } : loaded;
      return { database, ...cached.meta, source: 'hit', complete: async () => {} };
    }
    if (cached.miss !== 'none') missReason = cached.miss;
  }
  const base = options.snapshotDir === null ? { miss: 'not asked for' } : await readSnapshot(options.snapshotDir);
  const snapshot = 'tarball' in base ? 'used' : base.miss;
  const database = await openDatabase('tarball' in base ? { loadDataDir: base.tarball } : {});
  try {
    // A no-op on the snapshot (its key covers the migrations); the whole schema without one.
    await database.migrate();
    const restore = await dropForBulkLoad(database);
    const summary = await seedDemo(database.db, { now });
    await restore.foreignKeys();
    const aggregate = await buildDailyAggregate(database.db, { now });
    // PGlite runs no autovacuum, and the migrations analyzed the tables empty: the planner took the demo
    // brand's 3,600 reviews for 25 and sorted them all for each page (a cost on every list call). Fresh
    // statistics of every column, and the visibility map that index-only scans need, before anything
    // reads. (PGlite runs in this thread: a statement after listening holds up whatever request arrives
    // meanwhile, so only what changes no answer is left for then.)
    await database.db.execute(sql`VACUUM`);
    await database.db.execute(ANALYZE_COLUMNS);
    const complete = async () => {
      await restore.searchIndexes();
      // ANALYZE without a column list adds the statistics of the index expressions, which the planner
      // reads for keyword searches (partner_brand_grams, partner_menus_text): it evaluates them on every row
      // again, most of the cost of a full ANALYZE here. Plans may change with them; answers do not.
      await database.db.execute(sql`ANALYZE`);
      if (!cacheDir || !key) return;
      // A checkpoint first, so the dump starts without WAL to replay.
      await database.db.execute(sql`CHECKPOINT`);
      const dump = await pgliteOf(database).dumpDataDir('none');
      await writeDemoCache(cacheDir, { key, summary, aggregate }, new Uint8Array(await dump.arrayBuffer()));
    };
    return { database, summary, aggregate, source: 'built', snapshot, ...(missReason ? { missReason } : {}), complete };
  } catch (error) {
    await database.close().catch(() => undefined);
    throw error;
  }
}
