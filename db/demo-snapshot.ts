// The embedded default's starting point, made once at build time: an empty PGlite cluster with every
// migration applied, dumped to a tarball inside the installed package. It holds no demo data (that is
// relative to today in KST, D-3, and is seeded at start), so one build serves every day.
//
// A fresh cluster costs PGlite's initdb (a second PGlite instance) and the migrations, seconds and hundreds
// of MB at every start without a cached cluster; loading this tarball skips both. It is only used when its
// sidecar's key matches what builds a cluster: PGlite's version, its initdb and server settings
// (db/client.ts) and the migrations. Anything else (missing, torn, another key) is a miss, and a miss
// builds a cluster as without it.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { MIGRATIONS_FOLDER, openDatabase, PGLITE_INITDB_PARAMS, PGLITE_SETTINGS, pgliteOf } from './client';

/** The package's root: the nearest directory above this module holding its package.json (source or dist/). */
function packageRoot(from: string = import.meta.dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (manifest.name === 'partner-reporting-api') return dir;
    } catch {}
    if (path.dirname(dir) === dir) throw new Error(`no package root above ${from}`);
  }
}

/** Where `npm run build:demo` writes the snapshot and `npm start` reads it: inside the package, under dist/. */
export function defaultSnapshotDir(): string {
  return path.join(packageRoot(), 'dist', 'demo-cluster');
}

export function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  const main = require.resolve('@electric-sql/pglite');
  // …/node_modules/@electric-sql/pglite/dist/index.cjs → the package's own package.json.
  const manifest = path.join(main.slice(0, main.lastIndexOf(`${path.sep}dist${path.sep}`)), 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * What a migrated, empty cluster is made of: PGlite's version, its settings and every file of the
 * migrations folder. The same in the TypeScript sources and in the compiled build (the migrations are SQL
 * either way), and the same on every day.
 */
export function snapshotKey(migrationsFolder: string = MIGRATIONS_FOLDER): string {
  const hash = createHash('sha256');
  hash.update(`pglite ${pgliteVersion()}\0${PGLITE_INITDB_PARAMS.join(' ')}\0${PGLITE_SETTINGS.join(' ')}\0`);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const contents = readFileSync(full);
        hash.update(`${path.relative(migrationsFolder, full)}\0${contents.length}\0`);
        hash.update(contents);
      }
    }
  };
  walk(migrationsFolder);
  return hash.digest('hex').slice(0, 16);
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const filesOf = (dir: string) => ({ tarball: path.join(dir, 'cluster.tar'), meta: path.join(dir, 'cluster.json') });
type SnapshotMeta = { key: string; sha256: string };

/** A migrated, empty cluster, made now: the dump of an uncompressed data directory. */
export async function buildSnapshot(): Promise<Uint8Array> {
  const database = await openDatabase({});
  try {
    await database.migrate();
    // The template databases only serve CREATE DATABASE, which the embedded cluster never runs (PGlite
    // connects to `postgres`); they are two thirds of the files every start would load.
    for (const template of ['template0', 'template1']) {
      await database.db.execute(sql.raw(`ALTER DATABASE ${template} IS_TEMPLATE false`));
      await database.db.execute(sql.raw(`DROP DATABASE ${template}`));
    }
    // A checkpoint first, so the dump starts without WAL to replay.
    await database.db.execute(sql`CHECKPOINT`);
    return new Uint8Array(await (await pgliteOf(database).dumpDataDir('none')).arrayBuffer());
  } finally {
    await database.close();
  }
}

/** Builds the snapshot and writes it to `dir` (tarball, then the sidecar that vouches for it). */
export async function writeSnapshot(dir: string = defaultSnapshotDir()): Promise<{ key: string; bytes: number }> {
  const key = snapshotKey();
  const dump = await buildSnapshot();
  await mkdir(dir, { recursive: true });
  const target = filesOf(dir);
  const suffix = `.${process.pid}.tmp`;
  await writeFile(target.tarball + suffix, dump);
  await rename(target.tarball + suffix, target.tarball);
  await writeFile(target.meta + suffix, JSON.stringify({ key, sha256: sha256(dump) } satisfies SnapshotMeta));
  await rename(target.meta + suffix, target.meta);
  return { key, bytes: dump.byteLength };
}

/** The snapshot in `dir` when it matches `key` and its checksum, else why not. */
export async function readSnapshot(
  dir: string = defaultSnapshotDir(),
  key: string = snapshotKey(),
): Promise<{ tarball: Uint8Array } | { miss: string }> {
  const { tarball, meta } = filesOf(dir);
  let parsed: SnapshotMeta;
  let bytes: Buffer;
  try {
    parsed = JSON.parse(await readFile(meta, 'utf8')) as SnapshotMeta;
    bytes = await readFile(tarball);
  } catch (error) {
    return { miss: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'none' : String(error) };
  }
  if (parsed.key !== key) return { miss: 'built for other migrations or another PGlite' };
  if (parsed.sha256 !== sha256(bytes)) return { miss: 'does not match its checksum' };
  return { tarball: bytes };
}
